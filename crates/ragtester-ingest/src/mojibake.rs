//! Text that went through a wrong decoding once: UTF-8 bytes read as Latin-1 or windows-1252 and written
//! back as UTF-8, so "’" (E2 80 99) reads "â€™", or "â" followed by the C1 controls U+0080 U+0099. Web text
//! carries such runs often; a repaired run reads as its author wrote it. Control characters left after the
//! repair (other than tab, newlines and form feed) are dropped: they carry nothing a reader sees.

use encoding_rs::WINDOWS_1252;

/// The byte a char stood for when UTF-8 was misread as windows-1252 (or Latin-1, whose C1 range
/// windows-1252 leaves partly unmapped); None for a char outside that single-byte range.
fn byte_of(c: char) -> Option<u8> {
    let code = u32::from(c);
    if (0x80..=0xFF).contains(&code) {
        return Some(code as u8);
    }
    let mut buffer = [0u8; 4];
    let (bytes, _, unmappable) = WINDOWS_1252.encode(c.encode_utf8(&mut buffer));
    (!unmappable && bytes.len() == 1 && bytes[0] >= 0x80).then(|| bytes[0])
}

/// Repair every run of misread UTF-8: a run of two or more chars of the single-byte range whose bytes form
/// valid UTF-8 (every byte is 0x80 or above, so a valid decoding joins them into multi-byte chars). Returns
/// the text and how many runs were repaired.
pub fn repair(text: &str) -> (String, usize) {
    if text.is_ascii() {
        return (text.to_string(), 0);
    }
    let mut out = String::with_capacity(text.len());
    let mut repaired = 0;
    let mut run: Vec<(char, u8)> = Vec::new();
    let mut flush = |run: &mut Vec<(char, u8)>, out: &mut String| {
        let bytes: Vec<u8> = run.iter().map(|(_, b)| *b).collect();
        match std::str::from_utf8(&bytes) {
            Ok(fixed) if run.len() >= 2 => {
                out.push_str(fixed);
                repaired += 1;
            }
            _ => out.extend(run.iter().map(|(c, _)| *c)),
        }
        run.clear();
    };
    for c in text.chars() {
        match byte_of(c) {
            Some(b) => run.push((c, b)),
            None => {
                flush(&mut run, &mut out);
                out.push(c);
            }
        }
    }
    flush(&mut run, &mut out);
    (out, repaired)
}

/// Whether a char is a control character a text keeps (tab, line feed, carriage return, form feed).
fn kept_control(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{c}')
}

/// Control characters that are not kept, in the first `window` chars.
pub fn stray_controls(text: &str, window: usize) -> usize {
    text.chars()
        .take(window)
        .filter(|&c| c.is_control() && !kept_control(c))
        .count()
}

/// The text without its stray control characters, and how many there were.
pub fn drop_controls(text: &str) -> (String, usize) {
    let dropped = stray_controls(text, usize::MAX);
    if dropped == 0 {
        return (text.to_string(), 0);
    }
    (
        text.chars()
            .filter(|&c| !c.is_control() || kept_control(c))
            .collect(),
        dropped,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misread_utf8_reads_as_written() {
        // "’" misread as windows-1252, and as Latin-1 (its C1 controls kept).
        assert_eq!(
            repair("It\u{e2}\u{20ac}\u{2122}s here"),
            ("It’s here".into(), 1)
        );
        assert_eq!(
            repair("It\u{e2}\u{80}\u{99}s here"),
            ("It’s here".into(), 1)
        );
        assert_eq!(
            repair("caf\u{c3}\u{a9} and \u{e2}\u{20ac}\u{153}quoted\u{e2}\u{20ac}\u{9d}"),
            ("café and “quoted”".into(), 3)
        );
        // Latin text as written is left alone: single chars, and runs that are not UTF-8.
        for text in [
            "Café crème, naïve",
            "Ångström ×2 ½",
            "£5 — 10°C",
            "泵的压力",
        ] {
            assert_eq!(repair(text), (text.to_string(), 0), "{text}");
        }
    }

    #[test]
    fn stray_controls_are_counted_and_dropped() {
        assert_eq!(drop_controls("a\u{1}b\tc\u{85}d\n"), ("ab\tcd\n".into(), 2));
        assert_eq!(stray_controls("a\u{0}b\u{7f}", 10), 2);
    }
}
