//! A CSV table built in memory through a real CSV writer (RFC 4180 quoting).
//!
//! Names come from the user (a node called `s1,x`, a role with a quote), so
//! every cell goes through the `csv` crate: a cell with a comma, a quote or a
//! line break is quoted, and every row keeps its column count. Numbers are
//! formatted by the caller in Rust's shortest round-trip form.

/// A number as a cell: shortest round-trip form, or empty for NaN (a
/// statistic of nothing), never a made-up 0.
pub fn num(v: f64) -> String {
    if v.is_nan() {
        String::new()
    } else {
        v.to_string()
    }
}

/// One table: a header row, then rows of cells.
pub struct CsvTable {
    w: csv::Writer<Vec<u8>>,
    columns: usize,
}

impl CsvTable {
    /// A table with these column names.
    pub fn new(header: &[&str]) -> CsvTable {
        let mut w = csv::WriterBuilder::new()
            .terminator(csv::Terminator::Any(b'\n'))
            .from_writer(Vec::new());
        w.write_record(header).expect("writing to memory");
        CsvTable {
            w,
            columns: header.len(),
        }
    }

    /// Append one row; panics if it has a different number of cells than the header.
    pub fn row<S: AsRef<[u8]>>(&mut self, cells: &[S]) {
        assert_eq!(cells.len(), self.columns, "a CSV row has one cell per column");
        self.w.write_record(cells).expect("writing to memory");
    }

    /// The table as text.
    pub fn finish(self) -> String {
        let bytes = self.w.into_inner().expect("writing to memory");
        String::from_utf8(bytes).expect("cells are UTF-8")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_with_a_comma_or_quote_is_quoted() {
        let mut t = CsvTable::new(&["port", "from", "to"]);
        t.row(&["0", "s1,x", "h\"0"]);
        t.row(&["1", "a", "b"]);
        assert_eq!(t.finish(), "port,from,to\n0,\"s1,x\",\"h\"\"0\"\n1,a,b\n");
    }
}
