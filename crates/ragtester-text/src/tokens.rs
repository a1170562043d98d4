//! Token counts with a real BPE tokenizer (OpenAI's cl100k_base), shared by chunking, section splitting and
//! usage estimates so that "128 tokens" means the same everywhere.

use std::sync::OnceLock;
use tiktoken_rs::CoreBPE;

pub fn cl100k() -> &'static CoreBPE {
    static BPE: OnceLock<CoreBPE> = OnceLock::new();
    BPE.get_or_init(|| {
        tiktoken_rs::cl100k_base().expect("cl100k ranks are compiled into tiktoken-rs")
    })
}

pub fn count_tokens(text: &str) -> usize {
    cl100k().encode_ordinary(text).len()
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_tokens() {
        assert_eq!(super::count_tokens("hello world"), 2);
        assert_eq!(super::count_tokens(""), 0);
    }
}
