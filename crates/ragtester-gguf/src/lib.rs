//! In-process GGUF chat models: `local:PATH.gguf` and `hf:ORG/NAME[/FILE.gguf]` (read from the Hugging
//! Face cache), run on the CPU through candle. This crate knows model files and decoding; it knows no
//! wire protocol, spec syntax beyond `hf:` file names, or pipeline stage.

mod chat;
mod gguf_tokenizer;
pub mod hf_gguf;
mod json_constraint;
mod llama;
mod prefix_cache;

pub use chat::LocalChat;
