//! Print a PDF's text as the loader's engine sees it, per page, in one of pdf_oxide's modes (`layout`, the
//! loader's choice, or `glyph`), for comparing engines and modes (bench/pdf_fidelity.py).
fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(mode), Some(path)) = (args.next(), args.next()) else {
        eprintln!("usage: pdfdump layout|glyph FILE.pdf");
        std::process::exit(2);
    };
    let doc = pdf_oxide::PdfDocument::open(&path).expect("open");
    let opts = pdf_oxide::converters::ConversionOptions::default();
    for i in 0..doc.page_count().expect("pages") {
        let text = match mode.as_str() {
            "glyph" => doc.extract_text(i),
            _ => doc.to_plain_text(i, &opts),
        };
        println!("{}", text.unwrap_or_default());
    }
}
