//! Reuse of a local model's attention cache across prompts that open the same way. Every judge, critic and
//! question-writer prompt starts with the same long system text; processing it once instead of on every call
//! is what llama.cpp's server does with its slot cache.
//!
//! candle's models keep their key/value cache private and cannot cut it back to a shorter prefix, so a state
//! is kept whole: a clone of the model taken right after a prefix was fed (the weights are shared behind
//! `Arc`s; only the cache tensors are the clone's own, and a later forward pass concatenates new tensors
//! rather than writing into them). Where to take it is learned the way llama.cpp learns it: the tokens a
//! prompt shares with the one before it.

/// A state is kept only where at least this many tokens are shared: the chat template's own opening
/// (`<|im_start|>system\n`) is shared by every prompt and not worth a cache.
const MIN_SHARED_TOKENS: usize = 64;

/// States kept at once (each holds its prefix's key/value tensors), least recently used dropped first.
const CAPACITY: usize = 4;

pub(crate) struct PrefixCache<S> {
    /// Most recently used last.
    states: Vec<(Vec<u32>, S)>,
    last_prompt: Vec<u32>,
}

/// How to feed one prompt.
pub(crate) struct Plan<'a, S> {
    /// A kept state (to be copied before use) and the number of the prompt's opening tokens it has seen.
    pub(crate) resume: Option<(usize, &'a S)>,
    /// Feed the prompt up to here first and `keep` the state: this prompt's opening is shared with the
    /// previous prompt's, so the next one probably shares it too.
    pub(crate) keep_at: Option<usize>,
}

impl<S> PrefixCache<S> {
    pub(crate) fn new() -> Self {
        Self {
            states: Vec::new(),
            last_prompt: Vec::new(),
        }
    }

    pub(crate) fn plan(&mut self, prompt: &[u32]) -> Plan<'_, S> {
        // At least one prompt token is always fed: its logits choose the first reply token.
        let usable = |tokens: &[u32]| tokens.len() < prompt.len() && prompt.starts_with(tokens);
        let best = (0..self.states.len())
            .filter(|&i| usable(&self.states[i].0))
            .max_by_key(|&i| self.states[i].0.len());
        if let Some(i) = best {
            let entry = self.states.remove(i);
            self.states.push(entry);
        }
        let start = best.map_or(0, |_| self.states.last().expect("just pushed").0.len());
        let shared = common_prefix(prompt, &self.last_prompt).min(prompt.len() - 1);
        let keep_at = (shared >= start + MIN_SHARED_TOKENS).then_some(shared);
        self.last_prompt = prompt.to_vec();
        let resume = best.map(|_| {
            let (tokens, state) = self.states.last().expect("just pushed");
            (tokens.len(), state)
        });
        Plan { resume, keep_at }
    }

    #[cfg(test)]
    pub(crate) fn kept(&self) -> usize {
        self.states.len()
    }

    /// The state after feeding `tokens`.
    pub(crate) fn keep(&mut self, tokens: &[u32], state: S) {
        self.states.retain(|(kept, _)| kept != tokens);
        self.states.push((tokens.to_vec(), state));
        if self.states.len() > CAPACITY {
            self.states.remove(0);
        }
    }
}

fn common_prefix(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A prompt of `shared` system tokens followed by `own` tokens of its own, all different from another
    /// prompt's (`tag`).
    fn prompt(shared: usize, tag: u32, own: usize) -> Vec<u32> {
        (0..shared as u32)
            .chain((0..own as u32).map(|i| 10_000 * (tag + 1) + i))
            .collect()
    }

    #[test]
    fn the_second_prompt_keeps_the_shared_opening_and_the_third_resumes_there() {
        let mut cache = PrefixCache::<&str>::new();
        let first = cache.plan(&prompt(300, 1, 50));
        assert!(first.resume.is_none() && first.keep_at.is_none());
        let second = cache.plan(&prompt(300, 2, 40));
        assert!(second.resume.is_none());
        assert_eq!(second.keep_at, Some(300));
        cache.keep(&prompt(300, 2, 40)[..300], "after the system text");
        let third = cache.plan(&prompt(300, 3, 70));
        assert_eq!(third.resume, Some((300, &"after the system text")));
        assert_eq!(third.keep_at, None, "nothing longer is shared");
    }

    #[test]
    fn short_openings_are_not_kept_and_a_longer_shared_run_is() {
        let mut cache = PrefixCache::<u8>::new();
        cache.plan(&prompt(10, 1, 200));
        assert_eq!(cache.plan(&prompt(10, 2, 200)).keep_at, None);
        // The same question asked again with another answer: the shared run grows past the kept state.
        cache.keep(&prompt(300, 1, 0), 1);
        let question = |answer: u32| [prompt(300, 5, 100), vec![answer; 20]].concat();
        cache.plan(&question(1));
        let again = cache.plan(&question(2));
        assert_eq!(again.resume, Some((300, &1)));
        assert_eq!(again.keep_at, Some(400));
    }

    #[test]
    fn a_repeated_prompt_leaves_its_last_token_to_feed() {
        let mut cache = PrefixCache::<u8>::new();
        let same = prompt(200, 1, 0);
        cache.plan(&same);
        assert_eq!(cache.plan(&same).keep_at, Some(199));
        cache.keep(&same[..199], 7);
        assert_eq!(cache.plan(&same).resume, Some((199, &7)));
        assert!(
            cache.plan(&same[..199]).resume.is_none(),
            "a state covering the whole prompt is not usable"
        );
    }

    #[test]
    fn the_least_recently_used_state_goes_first() {
        let mut cache = PrefixCache::<usize>::new();
        for i in 0..CAPACITY {
            cache.keep(&prompt(0, i as u32, 100), i);
        }
        // Use the oldest, then add one more: the second oldest is dropped.
        assert_eq!(cache.plan(&prompt(0, 0, 150)).resume, Some((100, &0)));
        cache.keep(&prompt(0, 9, 100), 9);
        assert!(cache.plan(&prompt(0, 1, 150)).resume.is_none());
        assert_eq!(cache.plan(&prompt(0, 0, 150)).resume, Some((100, &0)));
    }
}
