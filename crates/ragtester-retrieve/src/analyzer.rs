//! The text analyzer shared by indexing and querying: jieba segmentation (which also splits Latin words),
//! punctuation and whitespace tokens dropped, lower-casing, English stop words and stemming. One analyzer
//! serves English, Chinese and mixed text.

use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, Stemmer, StopWordFilter, TextAnalyzer, Token,
    TokenFilter, TokenStream, Tokenizer,
};

pub const ANALYZER_NAME: &str = "ragtester_mixed";

pub fn mixed_analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(tantivy_jieba::JiebaTokenizer::new())
        .filter(WordsOnly)
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .filter(StopWordFilter::new(Language::English).expect("English stop words are built in"))
        .filter(Stemmer::new(Language::English))
        .build()
}

/// Words that make a sentence a question but say nothing of what it asks about: interrogatives, auxiliaries
/// and the asker's pronouns ("How do I copy an object?", "这个参数是什么？"). Left out of queries only —
/// passages keep them — so a question's weight falls on its subject. Measured on question-style sets built
/// from the Python and Debian FAQs (bench/faq_questions.py), where they otherwise match nearly every
/// passage; keyword queries (Vaswani) and CMRC are unchanged (docs/benchmarks.md).
pub const QUESTION_WORDS: &[&str] = &[
    "what",
    "which",
    "who",
    "whom",
    "whose",
    "when",
    "where",
    "why",
    "how",
    "do",
    "does",
    "did",
    "can",
    "could",
    "should",
    "would",
    "shall",
    "may",
    "might",
    "must",
    "i",
    "me",
    "my",
    "mine",
    "we",
    "us",
    "our",
    "you",
    "your",
    "什么",
    "怎么",
    "怎样",
    "如何",
    "为什么",
    "为何",
    "哪些",
    "哪个",
    "哪里",
    "哪儿",
    "吗",
    "呢",
];

/// The analyzer for queries: the index's, with question words dropped before stemming.
pub fn query_analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(tantivy_jieba::JiebaTokenizer::new())
        .filter(WordsOnly)
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .filter(StopWordFilter::new(Language::English).expect("English stop words are built in"))
        .filter(StopWordFilter::remove(
            QUESTION_WORDS.iter().map(|w| w.to_string()),
        ))
        .filter(Stemmer::new(Language::English))
        .build()
}

/// Drops tokens with no letter or digit (jieba emits spaces and punctuation as tokens).
#[derive(Clone)]
struct WordsOnly;

impl TokenFilter for WordsOnly {
    type Tokenizer<T: Tokenizer> = WordsOnlyFilter<T>;
    fn transform<T: Tokenizer>(self, tokenizer: T) -> WordsOnlyFilter<T> {
        WordsOnlyFilter(tokenizer)
    }
}

#[derive(Clone)]
struct WordsOnlyFilter<T>(T);

impl<T: Tokenizer> Tokenizer for WordsOnlyFilter<T> {
    type TokenStream<'a> = WordsOnlyStream<T::TokenStream<'a>>;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        WordsOnlyStream(self.0.token_stream(text))
    }
}

struct WordsOnlyStream<S>(S);

impl<S: TokenStream> TokenStream for WordsOnlyStream<S> {
    fn advance(&mut self) -> bool {
        while self.0.advance() {
            if self.0.token().text.chars().any(char::is_alphanumeric) {
                return true;
            }
        }
        false
    }
    fn token(&self) -> &Token {
        self.0.token()
    }
    fn token_mut(&mut self) -> &mut Token {
        self.0.token_mut()
    }
}

/// The analyzer's terms for a text, in order.
pub fn analyze(analyzer: &mut TextAnalyzer, text: &str) -> Vec<String> {
    let mut stream = analyzer.token_stream(text);
    let mut out = Vec::new();
    while stream.advance() {
        out.push(stream.token().text.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_lose_their_question_words_and_passages_keep_them() {
        let mut query = query_analyzer();
        assert_eq!(
            analyze(&mut query, "How do I copy an object in Python?"),
            vec!["copi", "object", "python"]
        );
        let terms = analyze(&mut query, "这个参数是什么？");
        assert!(!terms.contains(&"什么".to_string()), "{terms:?}");
        assert!(terms.contains(&"参数".to_string()), "{terms:?}");
        let mut index = mixed_analyzer();
        assert!(analyze(&mut index, "How do I copy it?").contains(&"how".to_string()));
    }

    #[test]
    fn english_is_stemmed_and_stopped() {
        let terms = analyze(&mut mixed_analyzer(), "The valves are Opening, slowly!");
        assert_eq!(terms, vec!["valv", "open", "slowli"]);
    }

    #[test]
    fn chinese_is_segmented_into_words() {
        let terms = analyze(&mut mixed_analyzer(), "额定电压为220伏，保修期两年。");
        assert!(
            terms.contains(&"额定".to_string()) || terms.contains(&"额定电压".to_string()),
            "{terms:?}"
        );
        assert!(terms.contains(&"220".to_string()), "{terms:?}");
        assert!(!terms.iter().any(|t| t == "，" || t == "。"), "{terms:?}");
    }

    #[test]
    fn mixed_text_gets_both_treatments() {
        let terms = analyze(&mut mixed_analyzer(), "Pumps 的额定功率 is 2.2 kW");
        assert!(terms.contains(&"pump".to_string()), "{terms:?}");
        assert!(
            terms.contains(&"额定".to_string()) || terms.contains(&"额定功率".to_string()),
            "{terms:?}"
        );
        assert!(!terms.contains(&"is".to_string()), "{terms:?}");
    }
}
