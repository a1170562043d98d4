//! Text decoding: a byte-order mark wins, then UTF-8, then an encoding guessed from the bytes (GB18030/GBK,
//! Big5, Shift_JIS, windows-125x…). A guess is reported as a warning, so the user knows what was assumed.

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
        return Ok(Decoded {
            text: text.to_string(),
            encoding: UTF_8.name(),
            warning: None,
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
    Ok(Decoded {
        warning: Some(format!(
            "not valid UTF-8 (first bad byte at offset {first_bad}); decoded as {} (guessed from its bytes)",
            encoding.name()
        )),
        text: text.into_owned(),
        encoding: encoding.name(),
    })
}

/// Control characters other than tab, newlines and form feed mean a binary file under a text name.
fn check_not_binary(text: &str) -> Result<()> {
    let controls = text
        .chars()
        .take(64 * 1024)
        .filter(|&c| c.is_control() && !matches!(c, '\t' | '\n' | '\r' | '\u{c}'))
        .count();
    if controls > 0 {
        bail!("looks binary ({controls} control characters in the first 64 KiB), not text");
    }
    Ok(())
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
    }
}
