//! JSON for programs that is inert on a terminal too.
//!
//! serde_json escapes the C0 controls in strings (`\u001b`) but writes DEL and the C1
//! controls (U+0080–U+009F, which some terminals take as CSI or OSC) as they are. Here
//! they are escaped as well: the document is the same JSON value, byte for byte what a
//! program reads, and nothing in it acts on a terminal it is shown on.
//!
//! ```
//! let bytes = codecrew::output::console::json::to_vec(&"\u{1b}\u{7f}\u{9b}ok").unwrap();
//! assert_eq!(bytes, br#""\u001b\u007f\u009bok""#);
//! ```

use std::io;

/// `value` as compact JSON, with DEL and the C1 controls escaped.
pub fn to_vec(value: &impl serde::Serialize) -> io::Result<Vec<u8>> {
    Ok(escape_controls(serde_json::to_vec(value)?))
}

/// `value` as pretty-printed JSON, with DEL and the C1 controls escaped.
pub fn to_vec_pretty(value: &impl serde::Serialize) -> io::Result<Vec<u8>> {
    Ok(escape_controls(serde_json::to_vec_pretty(value)?))
}

/// serde_json's output with DEL (`0x7f`) and the C1 controls (`0xc2 0x80..=0x9f` in
/// UTF-8) written as `\u00XX`. Outside strings JSON holds only printable ASCII, and in
/// valid UTF-8 `0xc2` is always a lead byte, so only characters inside strings change.
fn escape_controls(json: Vec<u8>) -> Vec<u8> {
    let needs = json
        .windows(2)
        .any(|pair| pair[0] == 0xc2 && (0x80..=0x9f).contains(&pair[1]))
        || json.contains(&0x7f);
    if !needs {
        return json;
    }
    let mut out = Vec::with_capacity(json.len() + 16);
    let mut bytes = json.iter().copied().peekable();
    while let Some(byte) = bytes.next() {
        match (byte, bytes.peek().copied()) {
            (0x7f, _) => out.extend_from_slice(b"\\u007f"),
            (0xc2, Some(next @ 0x80..=0x9f)) => {
                bytes.next();
                out.extend_from_slice(format!("\\u{next:04x}").as_bytes());
            }
            _ => out.push(byte),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    #[test]
    fn the_same_value_with_nothing_a_terminal_acts_on() {
        let value = json!({
            "text": "a\u{1b}]52;c;eA==\u{7}\u{7f}\u{85}\u{9b}2J\u{9f}\u{a0}é€😀",
            "\u{9d}key": ["\u{80}"],
        });
        for bytes in [to_vec(&value).unwrap(), to_vec_pretty(&value).unwrap()] {
            let text = String::from_utf8(bytes.clone()).unwrap();
            assert!(
                !text.chars().any(|c| c.is_control() && c != '\n'),
                "{text:?}"
            );
            assert_eq!(serde_json::from_slice::<Value>(&bytes).unwrap(), value);
        }
        // U+00A0 and other characters after 0xc2 stay as they are.
        assert!(
            String::from_utf8(to_vec(&"\u{a0}").unwrap())
                .unwrap()
                .contains('\u{a0}')
        );
    }
}
