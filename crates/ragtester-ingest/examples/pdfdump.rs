//! Print a PDF's text as the loader's engine sees it, per page, in one of pdf_oxide's modes (`layout`, the
//! loader's choice with its options, or `glyph`), for comparing engines and modes (bench/pdf_fidelity.py).
use ragtester_ingest::{PdfOxide, PdfTextEngine};

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(mode), Some(path)) = (args.next(), args.next()) else {
        eprintln!("usage: pdfdump layout|glyph FILE.pdf");
        std::process::exit(2);
    };
    if mode == "glyph" {
        let doc = pdf_oxide::PdfDocument::open(&path).expect("open");
        for i in 0..doc.page_count().expect("pages") {
            println!("{}", doc.extract_text(i).unwrap_or_default());
        }
        return;
    }
    let bytes = std::fs::read(&path).expect("read");
    for page in PdfOxide.page_texts(bytes).expect("extract") {
        println!("{page}");
    }
}
