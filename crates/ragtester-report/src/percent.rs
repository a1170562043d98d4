//! A share as every rendering writes it.

/// A share as a percentage with one decimal, `–` when undefined.
pub(crate) fn pct(x: Option<f64>) -> String {
    x.map_or("–".into(), |v| format!("{:.1}%", v * 100.0))
}
