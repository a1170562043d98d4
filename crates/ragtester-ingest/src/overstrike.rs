//! Undoing "poor man's bold": typesetters without a bold face (the LaTeX CJK package's headings, `\pmb`) print
//! each glyph two to four times with a small offset. poppler drops glyphs that land on one another; the text
//! our engine returns keeps them, so a heading reads `设设设备备备维维维`. This module collapses such words.
//!
//! A word (a run without spaces) is taken as overstruck when it consists of at least two runs of one
//! repeated character, the shortest run `k` is 2–4 long, and every run's length is a multiple of `k` (a bold
//! `第111章` prints as `第第第111111111章章章`). Doubled letters are common in ordinary words (`bookkeeper`),
//! so a word printed twice over must also have four or more runs and no digits (`00112233` stays).

/// The line with overstruck words printed once.
pub fn collapse_overstrike(line: &str) -> String {
    if !line.chars().zip(line.chars().skip(1)).any(|(a, b)| a == b) {
        return line.to_string();
    }
    let mut out = String::with_capacity(line.len());
    let mut word = String::new();
    for c in line.chars() {
        if c.is_whitespace() {
            push_word(&mut out, &word);
            word.clear();
            out.push(c);
        } else {
            word.push(c);
        }
    }
    push_word(&mut out, &word);
    out
}

fn push_word(out: &mut String, word: &str) {
    let runs = runs(word);
    match overstrike_factor(&runs) {
        Some(k) => {
            for (c, n) in runs {
                out.extend(std::iter::repeat_n(c, n / k));
            }
        }
        None => out.push_str(word),
    }
}

/// The word as (character, how many times in a row).
fn runs(word: &str) -> Vec<(char, usize)> {
    let mut runs: Vec<(char, usize)> = Vec::new();
    for c in word.chars() {
        match runs.last_mut() {
            Some((last, n)) if *last == c => *n += 1,
            _ => runs.push((c, 1)),
        }
    }
    runs
}

/// How many times each glyph was printed, when the word is overstruck.
fn overstrike_factor(runs: &[(char, usize)]) -> Option<usize> {
    if runs.len() < 2 {
        return None;
    }
    let k = runs.iter().map(|&(_, n)| n).min()?;
    if !(2..=4).contains(&k) || runs.iter().any(|&(_, n)| n % k != 0) {
        return None;
    }
    if k == 2 && (runs.len() < 4 || runs.iter().any(|(c, _)| c.is_ascii_digit())) {
        return None;
    }
    Some(k)
}

#[cfg(test)]
mod tests {
    use super::collapse_overstrike;

    #[test]
    fn overstruck_headings_are_printed_once() {
        assert_eq!(
            collapse_overstrike("设设设备备备维维维护护护手手手册册册"),
            "设备维护手册"
        );
        assert_eq!(
            collapse_overstrike("第第第111111111章章章 总总总则则则"),
            "第111章 总则"
        );
        assert_eq!(
            collapse_overstrike("CCChhhaaapppttteeerrr OOOnnneee"),
            "Chapter One"
        );
        assert_eq!(
            collapse_overstrike("ttwwiiccee pprriinntteedd"),
            "twice printed"
        );
        assert_eq!(collapse_overstrike("1.1  安安安装装装"), "1.1  安装");
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        for line in [
            "bookkeeper committee Mississippi aardvark",
            "00112233 0x0011 1122",
            "谢谢你，我们常常看看书。",
            "人人人",
            "...   ---   ===",
            "本手册说明了实验室离心机的日常维护流程。",
            "aabbcc",
        ] {
            assert_eq!(collapse_overstrike(line), line);
        }
    }
}
