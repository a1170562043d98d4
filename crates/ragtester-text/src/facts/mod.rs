//! Facts compared as facts: the quantities a text states — numbers with their units, times of day, dates,
//! amounts of money, percentages — read as values, so that "5km", "5 km" and "5,000 metres" are one
//! figure, "10.30 am" is "10:30", 三年 is "3 years" and 百分之九十二 is 92%.
//!
//! Every comparison of an answer with its passages or its reference goes through here (the contradiction
//! rule, the offline judge, claim checks, goal settling): an answer changes a figure only when it states a
//! value that none of its sources hold. Number words come from `text2num` (English) and `chinese-number`;
//! dates are checked with `chrono`; the units table (`units.rs`) is the one part written here.

mod memo;
mod normalise;
mod scan;
mod units;

pub use normalise::contractions;

/// `text` with apostrophes, contractions, number words and numerals in one spelling each (kept once
/// worked out, as `quantities` are).
pub fn normalise(text: &str) -> String {
    memo::normalised(text, normalise::normalise)
}
pub use scan::parse_number;
pub use units::Dimension;

/// A calendar date as far as a text gives it: "15 March" has no year, "2023年" only a year.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DateParts {
    pub year: Option<i32>,
    pub month: Option<u32>,
    pub day: Option<u32>,
}

impl DateParts {
    /// Two dates agree where both give a part, and they share at least one part.
    fn agrees(&self, other: &DateParts) -> bool {
        let part = |a: Option<u32>, b: Option<u32>| match (a, b) {
            (Some(a), Some(b)) => Some(a == b),
            _ => None,
        };
        let parts = [
            part(self.year.map(|y| y as u32), other.year.map(|y| y as u32)),
            part(self.month, other.month),
            part(self.day, other.day),
        ];
        parts.iter().all(|p| p.is_none_or(|same| same)) && parts.iter().any(Option::is_some)
    }
}

/// One quantity a text states.
#[derive(Debug, Clone, PartialEq)]
pub struct Quantity {
    pub dimension: Dimension,
    /// Its value in the dimension's base unit, each reading the text allows (10:30 in the morning or the
    /// evening). Empty for a date.
    pub values: Vec<f64>,
    /// A date's readings (03/04/2024 is two where both are dates).
    pub dates: Vec<DateParts>,
    /// The numbers as written, before units: what a bare figure elsewhere may repeat.
    pub numbers: Vec<f64>,
    /// The words that state it, as the (normalised) text has them.
    pub text: String,
}

impl Quantity {
    fn plain(dimension: Dimension, value: f64, numbers: Vec<f64>) -> Self {
        Self {
            dimension,
            values: vec![value],
            dates: Vec::new(),
            numbers,
            text: String::new(),
        }
    }

    fn date(dates: Vec<DateParts>, numbers: Vec<f64>) -> Self {
        Self {
            dimension: Dimension::Date,
            values: Vec::new(),
            dates,
            numbers,
            text: String::new(),
        }
    }

    /// Whether two quantities state the same value: one dimension and equal values (to a tenth of a
    /// percent where a unit was converted: 2 years are 24 months), or dates that agree, or a year within a decade.
    pub fn same(&self, other: &Quantity) -> bool {
        use Dimension::{Century, Count, Date, Decade};
        match (self.dimension, other.dimension) {
            (Date, Date) => self
                .dates
                .iter()
                .any(|a| other.dates.iter().any(|b| a.agrees(b))),
            (Decade, Count) | (Decade, Date) => {
                other.year_like().is_some_and(|y| self.within(y, 10.0))
            }
            (Count, Decade) | (Date, Decade) => {
                self.year_like().is_some_and(|y| other.within(y, 10.0))
            }
            (Century, Count) | (Century, Date) => {
                other.year_like().is_some_and(|y| self.within(y, 100.0))
            }
            (Count, Century) | (Date, Century) => {
                self.year_like().is_some_and(|y| other.within(y, 100.0))
            }
            (Century, Decade) => other.values.first().is_some_and(|y| self.within(*y, 100.0)),
            (Decade, Century) => self.values.first().is_some_and(|y| other.within(*y, 100.0)),
            (Date, Count) => other.year_like().is_some_and(|y| self.is_year(y)),
            (Count, Date) => self.year_like().is_some_and(|y| other.is_year(y)),
            (a, b) if a == b => {
                // Only a measure converted between units needs room for rounding ("32.2 km/h" for
                // "20 mph"); a count, a year, a decade, a time of day, a share or a sum is the same or not.
                let exact = !a.converts();
                self.values
                    .iter()
                    .any(|x| other.values.iter().any(|y| close(*x, *y, exact)))
            }
            _ => false,
        }
    }

    fn year_like(&self) -> Option<f64> {
        match self.dimension {
            Dimension::Count => self.values.first().copied(),
            Dimension::Date => self.dates.first().and_then(|d| d.year).map(f64::from),
            _ => None,
        }
    }

    /// Whether `year` falls in the span of years this decade or century opens.
    fn within(&self, year: f64, span: f64) -> bool {
        self.values
            .first()
            .is_some_and(|d| (*d..*d + span).contains(&year))
    }

    fn is_year(&self, year: f64) -> bool {
        self.dates
            .iter()
            .any(|d| d.year.map(f64::from) == Some(year) && d.month.is_none())
    }

    /// Whether `sources` hold this quantity: one of them states the same value, or this is a bare number
    /// one of them writes (a count the source gives with its unit, a year of a date), or this gives a unit
    /// to a number a source writes bare.
    pub fn held_by(&self, sources: &[Quantity]) -> bool {
        let number = self.numbers.first().copied();
        sources.iter().any(|s| {
            self.same(s)
                || (self.dimension == Dimension::Count
                    && self.values.iter().any(|v| {
                        s.numbers
                            .iter()
                            .chain(&s.values)
                            .any(|n| close(*v, *n, true))
                    }))
                || (s.dimension == Dimension::Count
                    && number.is_some_and(|n| s.values.iter().any(|v| close(n, *v, true))))
        })
    }
}

impl Quantity {
    /// Whether `said` states this quantity whole: the same value, as specific as this one — a date with
    /// every part this one gives ("March 2021" does not state "15 March 2021"), a measure with its unit
    /// ("4.5" does not state "4.5 bar"). What completeness asks of an answer; `held_by` is what a figure
    /// needs not to be invented.
    pub fn covered_by(&self, said: &[Quantity]) -> bool {
        said.iter().any(|s| match (self.dimension, s.dimension) {
            (Dimension::Date, Dimension::Date) => self.dates.iter().any(|w| {
                s.dates.iter().any(|g| {
                    g.agrees(w)
                        && (w.year.is_none() || g.year.is_some())
                        && (w.month.is_none() || g.month.is_some())
                        && (w.day.is_none() || g.day.is_some())
                })
            }),
            (Dimension::Count, _) => self.held_by(std::slice::from_ref(s)),
            _ => self.same(s),
        })
    }
}

fn close(a: f64, b: f64, exact: bool) -> bool {
    let scale = a.abs().max(b.abs()).max(1.0);
    // A tenth of a percent: what writing a converted figure to three or four digits loses.
    let tolerance = if exact { 1e-9 } else { 1e-3 };
    (a - b).abs() <= tolerance * scale
}

/// Whether a word is a unit or a currency as the figures read them ("USD", "km", "公斤"): words that
/// stand beside a figure, never a name.
pub fn is_unit_word(word: &str) -> bool {
    let lower = word.trim().to_lowercase();
    !lower.is_empty()
        && (units::UNITS
            .iter()
            .any(|u| u.names.contains(&lower.as_str()))
            || scan::is_currency_word(&lower))
}

/// Every quantity `text` states, in order. Judging reads the same retrieved passages for many cells (and
/// each cell's passages in several checks), so a text's quantities are kept once read (`memo`).
pub fn quantities(text: &str) -> Vec<Quantity> {
    memo::quantities(text, |t| scan::scan(&normalise(t)))
}

/// The quantities of several texts together: what a set of sources holds.
pub fn quantities_of<'a>(texts: impl IntoIterator<Item = &'a str>) -> Vec<Quantity> {
    texts.into_iter().flat_map(quantities).collect()
}

/// The quantities `answer` states that none of `sources` hold: its invented or changed figures.
pub fn unheld(answer: &str, sources: &[&str]) -> Vec<Quantity> {
    let held = quantities_of(sources.iter().copied());
    quantities(answer)
        .into_iter()
        .filter(|q| !q.held_by(&held))
        .collect()
}

#[cfg(test)]
mod tests;
