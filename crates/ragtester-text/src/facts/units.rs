//! Units by dimension, each with its factor to the dimension's base unit. The one hand-written table of the
//! fact comparison: no maintained crate reads free-text units ("5km", "5,000 metres", "8-hour", 三公里), and
//! `uom` converts typed quantities, not words.

/// What a quantity measures. Two quantities compare only within one dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dimension {
    /// A number with no unit: a count, an ordinal, a year standing alone.
    Count,
    Length,
    Mass,
    Duration,
    Volume,
    Area,
    Pressure,
    Speed,
    Data,
    Power,
    Energy,
    Voltage,
    Frequency,
    Celsius,
    Fahrenheit,
    Percent,
    /// An amount of money in one currency (ISO code); currencies are never converted into each other.
    Money(&'static str),
    /// Minutes since midnight.
    TimeOfDay,
    /// A calendar date (its parts compared, see `DateParts`).
    Date,
    /// A decade: "the 1970s", 1970年代 (value: its first year).
    Decade,
    /// A century: 20世纪, "the 20th century" (value: its first year, 1900).
    Century,
}

impl Dimension {
    /// Whether values of this dimension are converted between units (and so may carry rounding).
    pub fn converts(self) -> bool {
        !matches!(
            self,
            Dimension::Count
                | Dimension::Percent
                | Dimension::Money(_)
                | Dimension::TimeOfDay
                | Dimension::Date
                | Dimension::Decade
                | Dimension::Century
                | Dimension::Celsius
                | Dimension::Fahrenheit
        )
    }
}

/// A unit as written, its dimension and factor to the base unit (metres, grams, seconds, litres, square
/// metres, pascals, metres per second, bytes, watts, joules, volts, hertz).
pub struct Unit {
    pub names: &'static [&'static str],
    pub dimension: Dimension,
    pub factor: f64,
}

const DAY: f64 = 86_400.0;
const YEAR: f64 = 365.25 * DAY;

macro_rules! units {
    ($($dim:ident $factor:expr => [$($name:expr),+ $(,)?];)+) => {
        &[$(Unit { names: &[$($name),+], dimension: Dimension::$dim, factor: $factor }),+]
    };
}

/// Every unit, compound ones ("km/h") before their parts, so the longest spelling is tried first.
pub const UNITS: &[Unit] = units![
    Speed 1.0 / 3.6 => ["km/h", "kph", "kmh", "km per hour", "kilometres per hour", "kilometers per hour", "公里/小时", "千米/小时", "公里每小时"];
    Speed 0.44704 => ["mph", "miles per hour"];
    Speed 1.0 => ["m/s", "metres per second", "meters per second", "米/秒", "米每秒"];
    Energy 3.6e6 => ["kwh", "kilowatt-hours", "kilowatt hours", "kilowatt-hour", "千瓦时"];
    Energy 3600.0 => ["wh", "watt-hours", "watt hours"];
    Area 1e6 => ["km2", "km²", "square kilometres", "square kilometers", "平方公里", "平方千米"];
    Area 1.0 => ["m2", "m²", "square metres", "square meters", "sq m", "平方米"];
    Area 1e4 => ["hectares", "hectare", "ha", "公顷"];
    Length 1000.0 => ["kilometres", "kilometers", "kilometre", "kilometer", "kms", "km", "公里", "千米"];
    Length 0.01 => ["centimetres", "centimeters", "centimetre", "centimeter", "cm", "厘米"];
    Length 0.001 => ["millimetres", "millimeters", "millimetre", "millimeter", "mm", "毫米"];
    Length 1609.344 => ["miles", "mile", "mi", "英里"];
    Length 0.3048 => ["feet", "foot", "ft"];
    Length 0.0254 => ["inches", "inch"];
    Length 0.9144 => ["yards", "yard", "yd"];
    Length 1.0 => ["metres", "meters", "metre", "meter", "m", "米"];
    Mass 1e6 => ["tonnes", "tonne", "tons", "ton", "吨"];
    Mass 1000.0 => ["kilograms", "kilogrammes", "kilogram", "kilos", "kilo", "kgs", "kg", "公斤", "千克"];
    Mass 0.001 => ["milligrams", "milligram", "mg", "毫克"];
    Mass 453.592_37 => ["pounds weight", "lbs", "lb"];
    Mass 500.0 => ["斤"];
    Mass 1.0 => ["grams", "grammes", "gram", "g", "克"];
    Volume 0.001 => ["millilitres", "milliliters", "millilitre", "milliliter", "ml", "毫升"];
    Volume 1.0 => ["litres", "liters", "litre", "liter", "l", "升"];
    Volume 3.785_411_784 => ["gallons", "gallon", "gal"];
    Pressure 1e5 => ["bar", "bars", "巴"];
    Pressure 100.0 => ["mbar", "millibar", "hpa"];
    Pressure 1e6 => ["mpa", "兆帕"];
    Pressure 1000.0 => ["kpa", "千帕"];
    Pressure 6894.757 => ["psi"];
    Pressure 1.0 => ["pa", "pascals", "pascal", "帕"];
    Data 1e12 => ["tb", "terabytes", "terabyte"];
    Data 1e9 => ["gb", "gigabytes", "gigabyte"];
    Data 1e6 => ["mb", "megabytes", "megabyte"];
    Data 1e3 => ["kb", "kilobytes", "kilobyte"];
    Power 1e6 => ["megawatts", "megawatt", "兆瓦"];
    Power 1000.0 => ["kilowatts", "kilowatt", "kw", "千瓦"];
    Power 1.0 => ["watts", "watt", "w", "瓦"];
    Voltage 1000.0 => ["kilovolts", "kv", "千伏"];
    Voltage 1.0 => ["volts", "volt", "v", "伏"];
    Frequency 1e9 => ["ghz"];
    Frequency 1e6 => ["mhz"];
    Frequency 1e3 => ["khz"];
    Frequency 1.0 => ["hz", "hertz", "赫兹"];
    Celsius 1.0 => ["°c", "℃", "degrees celsius", "degrees c", "摄氏度", "度"];
    Fahrenheit 1.0 => ["°f", "℉", "degrees fahrenheit", "degrees f"];
    Duration YEAR * 10.0 => ["decades", "decade"];
    Duration YEAR => ["years", "year", "yrs", "yr", "年"];
    Duration YEAR / 12.0 => ["months", "month", "个月"];
    Duration 14.0 * DAY => ["fortnights", "fortnight"];
    Duration 7.0 * DAY => ["weeks", "week", "wks", "个星期", "星期", "周"];
    Duration DAY => ["days", "day", "天"];
    Duration 3600.0 => ["hours", "hour", "hrs", "hr", "h", "个小时", "小时", "钟头"];
    Duration 60.0 => ["minutes", "minute", "mins", "min", "分钟"];
    Duration 1.0 => ["seconds", "second", "secs", "sec", "s", "秒钟", "秒"];
];

/// The unit `text` opens with, and how many bytes of it the unit's name takes. A Latin name must end at a
/// word boundary ("m" of "5 m" but not of "5 members"); a one-letter name must be written as the table
/// spells it or in capitals where that is the custom ("5 L", "60 W"), never a capital "S" or "M".
pub fn unit_at(text: &str) -> Option<(&'static Unit, usize)> {
    let lower = text[..text.floor_char_boundary(32)].to_lowercase();
    for unit in UNITS {
        for name in unit.names {
            if !lower.starts_with(name) {
                continue;
            }
            let len = name.len();
            let latin = name
                .chars()
                .last()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '²');
            let ends = text[len.min(text.len())..]
                .chars()
                .next()
                .is_none_or(|c| !c.is_alphanumeric() || crate::is_cjk(c));
            if latin && !ends {
                continue;
            }
            if name.len() == 1 && !one_letter_ok(name, text.get(..1).unwrap_or_default()) {
                continue;
            }
            return Some((unit, len));
        }
    }
    None
}

fn one_letter_ok(name: &str, written: &str) -> bool {
    written == name || matches!(written, "L" | "W" | "V")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_read_whole_and_at_a_word_boundary() {
        let at = |t: &str| unit_at(t).map(|(u, n)| (u.dimension, u.factor, n));
        assert_eq!(at("km long"), Some((Dimension::Length, 1000.0, 2)));
        assert_eq!(at("km/h"), Some((Dimension::Speed, 1.0 / 3.6, 4)));
        assert_eq!(at("metres"), Some((Dimension::Length, 1.0, 6)));
        assert_eq!(at("members"), None);
        assert_eq!(at("hours a day").map(|x| x.0), Some(Dimension::Duration));
        assert_eq!(at("公里"), Some((Dimension::Length, 1000.0, 6)));
        assert_eq!(at("M"), None);
        assert_eq!(at("L of water").map(|x| x.0), Some(Dimension::Volume));
    }
}
