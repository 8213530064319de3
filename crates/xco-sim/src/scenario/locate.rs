//! Name the key a TOML reading error is about (`apps[2].sru`), from its span.
//!
//! The TOML reader reports where in the text a value failed to deserialize
//! (an unknown field, an unknown choice, a string where a number belongs) but
//! not the dotted path a user would look for; this walks the parsed document
//! to the innermost key whose key or value covers that place.

use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// The dotted key path (`topology.kind`, `apps[2].sru`) at byte `offset` of
/// `text`, or `""` when the text does not parse or nothing covers it.
pub fn key_path_at(text: &str, offset: usize) -> String {
    let Ok(doc) = DeTable::parse(text) else {
        return String::new();
    };
    let mut path = String::new();
    walk_table(doc.get_ref(), offset, &mut path);
    path
}

fn walk_table(t: &DeTable<'_>, offset: usize, path: &mut String) -> bool {
    for (k, v) in t.iter() {
        let in_key = k.span().contains(&offset);
        let in_value = v.span().contains(&offset);
        if in_key || in_value {
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(k.get_ref());
            if in_value {
                walk_value(v, offset, path);
            }
            return true;
        }
    }
    // a table from `[section]` headers: its entries may lie outside its span
    for (k, v) in t.iter() {
        if let DeValue::Table(inner) = v.get_ref() {
            let mut sub = path.clone();
            if !sub.is_empty() {
                sub.push('.');
            }
            sub.push_str(k.get_ref());
            if walk_table(inner, offset, &mut sub) {
                *path = sub;
                return true;
            }
        }
        if let DeValue::Array(items) = v.get_ref() {
            for (i, item) in items.iter().enumerate() {
                if let DeValue::Table(inner) = item.get_ref() {
                    let mut sub = format!(
                        "{}{}{}[{i}]",
                        path,
                        if path.is_empty() { "" } else { "." },
                        k.get_ref()
                    );
                    if walk_table(inner, offset, &mut sub) {
                        *path = sub;
                        return true;
                    }
                }
            }
        }
    }
    false
}

fn walk_value(v: &Spanned<DeValue<'_>>, offset: usize, path: &mut String) {
    match v.get_ref() {
        DeValue::Table(t) => {
            walk_table(t, offset, path);
        }
        DeValue::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                if item.span().contains(&offset) {
                    path.push_str(&format!("[{i}]"));
                    walk_value(item, offset, path);
                    return;
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_keys_in_sections_and_arrays_of_tables() {
        let text = "[topology]\nkind = \"torus\"\n\n[[apps]]\nkind = \"bulk\"\n\n[[apps]]\nsru = \"64Kb\"\n";
        let at = |needle: &str| key_path_at(text, text.find(needle).unwrap());
        assert_eq!(at("torus"), "topology.kind");
        assert_eq!(at("64Kb"), "apps[1].sru");
        assert_eq!(at("sru"), "apps[1].sru");
        let inline = "apps = [{kind = \"ping\", count = -1}]\n";
        assert_eq!(key_path_at(inline, inline.find("-1").unwrap()), "apps[0].count");
    }
}
