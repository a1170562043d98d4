//! Text decoding: a byte-order mark wins, then UTF-8, then an encoding guessed from the bytes (GB18030/GBK,
//! Big5, Shift_JIS, windows-125x…). A guess is reported as a warning, so the user knows what was assumed.

use crate::mojibake;
use anyhow::{Result, bail};
use encoding_rs::{Encoding, UTF_8};

/// Decoded text, and a note when the encoding was guessed rather than known.
#[derive(Debug)]
pub struct Decoded {
    pub text: String,
    pub encoding: &'static str,
    pub warning: Option<String>,
}

pub fn decode_text(bytes: &[u8]) -> Result<Decoded> {
    if let Some((encoding, bom_len)) = Encoding::for_bom(bytes) {
        let (text, had_errors) = encoding.decode_without_bom_handling(&bytes[bom_len..]);
        if had_errors {
            bail!(
                "has a {} byte-order mark but is not valid {}",
                encoding.name(),
                encoding.name()
            );
        }
        return Ok(Decoded {
            text: text.into_owned(),
            encoding: encoding.name(),
            warning: None,
        });
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        check_not_binary(text)?;
        let (text, warning) = cleaned(text);
        return Ok(Decoded {
            text,
            encoding: UTF_8.name(),
            warning,
        });
    }
    let first_bad = std::str::from_utf8(bytes)
        .err()
        .map_or(0, |e| e.valid_up_to());
    let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    detector.feed(bytes, true);
    let encoding = detector.guess(None, chardetng::Utf8Detection::Deny);
    let (text, had_errors) = encoding.decode_without_bom_handling(bytes);
    if had_errors {
        bail!(
            "not valid UTF-8 (first bad byte at offset {first_bad}) and not valid {} either; convert it to UTF-8",
            encoding.name()
        );
    }
    check_not_binary(&text)?;
    let guessed = format!(
        "not valid UTF-8 (first bad byte at offset {first_bad}); decoded as {} (guessed from its bytes)",
        encoding.name()
    );
    let (text, repaired) = cleaned(&text);
    Ok(Decoded {
        warning: Some(repaired.map_or(guessed.clone(), |r| format!("{guessed}; {r}"))),
        text,
        encoding: encoding.name(),
    })
}

/// How many chars the binary check reads.
const WINDOW: usize = 64 * 1024;

/// A NUL, or more stray control characters than one in a hundred chars (and more than a handful) once
/// misread UTF-8 is repaired, means a binary file under a text name; a few in real text are a bad copy.
fn check_not_binary(text: &str) -> Result<()> {
    let sample: String = text.chars().take(WINDOW).collect();
    let (repaired, _) = mojibake::repair(&sample);
    let controls = mojibake::stray_controls(&repaired, WINDOW);
    let chars = repaired.chars().count().max(1);
    if sample.contains('\0') || (controls > 8 && controls * 100 > chars) {
        bail!("looks binary ({controls} control characters in the first 64 KiB), not text");
    }
    Ok(())
}

/// Text with misread UTF-8 repaired and stray control characters dropped, and a note of what changed.
fn cleaned(text: &str) -> (String, Option<String>) {
    let (repaired, runs) = mojibake::repair(text);
    let (kept, dropped) = mojibake::drop_controls(&repaired);
    let mut notes = Vec::new();
    if runs > 0 {
        notes.push(format!(
            "repaired {runs} run(s) of misread UTF-8 (\"â€™\" and the like, back to \"’\")"
        ));
    }
    if dropped > 0 {
        notes.push(format!("dropped {dropped} stray control character(s)"));
    }
    (kept, (!notes.is_empty()).then(|| notes.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_with_and_without_bom() {
        let d = decode_text("\u{feff}标题".as_bytes()).unwrap();
        assert_eq!((d.text.as_str(), d.encoding), ("标题", "UTF-8"));
        let d = decode_text("plain".as_bytes()).unwrap();
        assert!(d.warning.is_none());
    }

    #[test]
    fn utf16_with_bom() {
        let mut le = vec![0xFF, 0xFE];
        le.extend(
            "泵的压力 pressure"
                .encode_utf16()
                .flat_map(u16::to_le_bytes),
        );
        assert_eq!(decode_text(&le).unwrap().text, "泵的压力 pressure");
        let mut be = vec![0xFE, 0xFF];
        be.extend("泵的压力".encode_utf16().flat_map(u16::to_be_bytes));
        let d = decode_text(&be).unwrap();
        assert_eq!((d.text.as_str(), d.encoding), ("泵的压力", "UTF-16BE"));
    }

    #[test]
    fn gb18030_is_detected_with_a_warning() {
        let source = "离心泵的最大工作压力为四点五巴。每次启动前必须检查密封圈是否完好，并确认进口阀门已经打开。";
        let (bytes, _, _) = encoding_rs::GB18030.encode(source);
        let d = decode_text(&bytes).unwrap();
        assert_eq!(d.text, source);
        assert_eq!(d.encoding, "GBK");
        assert!(d.warning.unwrap().contains("decoded as GBK"));
    }

    #[test]
    fn latin1_bytes_decode_as_windows_1252() {
        let d = decode_text(b"Caf\xe9 cr\xe8me and na\xefve r\xe9sum\xe9 text").unwrap();
        assert_eq!(d.text, "Café crème and naïve résumé text");
        assert!(d.warning.is_some());
    }

    #[test]
    fn binary_is_refused() {
        let err = decode_text(b"\x00\x01\x02ELF\x00\x00binary").unwrap_err();
        assert!(err.to_string().contains("looks binary"), "{err}");
        // Dense control characters without a NUL are binary too.
        let dense: Vec<u8> = (0..400)
            .map(|i| if i % 3 == 0 { 1 } else { b'a' })
            .collect();
        assert!(decode_text(&dense).is_err());
    }

    #[test]
    fn web_text_with_stray_controls_is_text() {
        let page =
            "The valve\u{1} opens at 4.5 bar. It\u{e2}\u{80}\u{99}s checked yearly. ".repeat(3);
        let d = decode_text(page.as_bytes()).unwrap();
        assert_eq!(
            d.text,
            "The valve opens at 4.5 bar. It’s checked yearly. ".repeat(3)
        );
        let warning = d.warning.unwrap();
        assert!(warning.contains("repaired 3 run(s)"), "{warning}");
        assert!(warning.contains("dropped 3 stray control"), "{warning}");
    }
}
