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

/// A table that stops growing at a size limit: rows are written through the
/// same CSV writer, and a row that would take the text past `limit_bytes` is
/// not kept, nor is any row after it.
pub struct BoundedCsv {
    w: csv::Writer<Vec<u8>>,
    columns: usize,
    limit_bytes: u64,
    /// Bytes of the text that is kept (the header and every row that fit).
    kept: usize,
    full: bool,
}

impl BoundedCsv {
    /// A table with these column names, at most `limit_bytes` long (the
    /// header row is always kept).
    pub fn new(header: &[&str], limit_bytes: u64) -> BoundedCsv {
        let mut w = csv::WriterBuilder::new()
            .terminator(csv::Terminator::Any(b'\n'))
            .from_writer(Vec::new());
        w.write_record(header).expect("writing to memory");
        w.flush().expect("writing to memory");
        let kept = w.get_ref().len();
        BoundedCsv {
            w,
            columns: header.len(),
            limit_bytes,
            kept,
            full: false,
        }
    }

    /// Append one row if it fits; false (now and for every later row) once
    /// one did not. Panics if it has a different number of cells than the header.
    pub fn row<S: AsRef<[u8]>>(&mut self, cells: &[S]) -> bool {
        assert_eq!(cells.len(), self.columns, "a CSV row has one cell per column");
        if self.full {
            return false;
        }
        self.w.write_record(cells).expect("writing to memory");
        // every row is flushed into the vector, so its length is the text's
        self.w.flush().expect("writing to memory");
        let len = self.w.get_ref().len();
        if len as u64 > self.limit_bytes {
            self.full = true;
            return false;
        }
        self.kept = len;
        true
    }

    /// True once a row did not fit.
    pub fn is_full(&self) -> bool {
        self.full
    }

    /// Keep no row that would take the text past `bytes` from now on.
    pub fn set_limit(&mut self, bytes: u64) {
        self.limit_bytes = bytes;
    }

    /// The size limit.
    pub fn limit_bytes(&self) -> u64 {
        self.limit_bytes
    }

    /// The text kept, moved out.
    pub fn into_text(self) -> String {
        let mut bytes = self.w.into_inner().expect("writing to memory");
        bytes.truncate(self.kept);
        String::from_utf8(bytes).expect("cells are UTF-8")
    }

    /// The text kept so far.
    pub fn text(&self) -> &str {
        std::str::from_utf8(&self.w.get_ref()[..self.kept]).expect("cells are UTF-8")
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

    #[test]
    fn a_bounded_table_keeps_the_rows_that_fit_and_none_after() {
        let mut t = BoundedCsv::new(&["a", "b"], 12);
        assert_eq!(t.text(), "a,b\n");
        assert!(t.row(&["1", "2"]) && t.row(&["3", "4"]));
        assert!(!t.row(&["5", "6"]), "12 bytes hold the header and two rows");
        assert!(!t.row(&["7", "8"]) && t.is_full());
        assert_eq!(t.text(), "a,b\n1,2\n3,4\n");
    }
}
