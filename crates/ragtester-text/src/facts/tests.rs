use super::*;

fn held(answer: &str, sources: &[&str]) -> bool {
    unheld(answer, sources).is_empty()
}

#[test]
fn one_figure_in_any_spelling_is_held() {
    for (answer, source) in [
        ("It is 5km long.", "The trail is 5 km long."),
        ("It is 5,000 metres long.", "The trail is 5 km long."),
        ("It opens at 4.50 bar.", "The valve opens at 4.5 bar."),
        ("It opens at 4,5 bar.", "The valve opens at 4.5 bar."),
        ("The office opens at 10.30 am.", "Opening time: 10:30."),
        ("Closing is at 18:00.", "It closes at 6 p.m."),
        (
            "It was signed on the 15th of March.",
            "Signed 15 March 2021.",
        ),
        ("It was signed on March 15, 2021.", "Signed 15 March 2021."),
        ("It was signed on 2021-03-15.", "Signed 15 March 2021."),
        (
            "Three technicians, each on an 8-hour shift.",
            "A team of 3 technicians works 8 hours a shift.",
        ),
        (
            "The warranty lasts two years.",
            "The warranty lasts 24 months.",
        ),
        ("It takes three weeks.", "Allow 21 days."),
        ("About thirty-five people attended.", "35 people attended."),
        ("A dozen valves were replaced.", "12 valves were replaced."),
        ("The fee is 50 dollars.", "The fee is $50."),
        ("It costs $1.2 million.", "It costs $1,200,000."),
        (
            "It was built in the 1970s.",
            "Construction finished in 1974.",
        ),
        ("The trail is 1,200 m.", "It runs for 1.2 kilometres."),
        ("It weighs 2 kg.", "It weighs 2000 g."),
        (
            "The meeting lasts half an hour.",
            "Meetings last 30 minutes.",
        ),
        ("The 1st floor.", "On the first floor."),
    ] {
        assert!(
            held(answer, &[source]),
            "{answer:?} against {source:?}: {:?}",
            unheld(answer, &[source])
        );
    }
}

#[test]
fn chinese_figures_in_any_spelling_are_held() {
    for (answer, source) in [
        ("保修三年。", "保修期为3年。"),
        ("合格率是百分之九十二。", "合格率为92%。"),
        ("费用五十元。", "费用为50元。"),
        ("始建于二〇二三年。", "该馆2023年建成。"),
        ("共有十四名队员。", "队员14名。"),
        ("两个小时。", "需要2小时。"),
        ("下午6点闭馆。", "闭馆时间18:00。"),
        ("2021年3月15日签署。", "签署于2021年3月15日。"),
        ("10点半开门。", "开门时间10:30。"),
        ("全长5公里。", "全长5000米。"),
    ] {
        assert!(
            held(answer, &[source]),
            "{answer:?} against {source:?}: {:?}",
            unheld(answer, &[source])
        );
    }
}

#[test]
fn a_changed_figure_is_not_held() {
    for (answer, source) in [
        ("It opens at 11.5 bar.", "The valve opens at 4.5 bar."),
        ("It is 5 miles long.", "The trail is 5 km long."),
        (
            "The warranty lasts three years.",
            "The warranty lasts 24 months.",
        ),
        ("It closes at 5 p.m.", "It closes at 6 p.m."),
        ("It was signed on 16 March 2021.", "Signed 15 March 2021."),
        ("The fee is 50 euros.", "The fee is $50."),
        (
            "It was built in 1985.",
            "Construction finished in the 1970s.",
        ),
        ("保修五年。", "保修期为3年。"),
        ("成立于1977年代。", "成立于1970年代。"),
        ("It runs for 2,004 metres.", "It runs for 2 km."),
        ("合格率是百分之八十。", "合格率为92%。"),
    ] {
        assert!(!held(answer, &[source]), "{answer:?} against {source:?}");
    }
}

#[test]
fn words_that_look_like_numbers_are_not_figures() {
    for text in [
        "No one knows.",
        "First, open the valve.",
        "一般来说，大家一起去。",
        "千万不要忘记。",
        "有一点贵。",
        "The 5G model.",
    ] {
        assert!(
            quantities(text).is_empty(),
            "{text}: {:?}",
            quantities(text)
        );
    }
}

#[test]
fn quantities_carry_their_dimension_and_value() {
    let q = quantities("The pump runs for 8 hours at 1,200 rpm and 40 °C, costing €30.");
    let dims: Vec<Dimension> = q.iter().map(|q| q.dimension).collect();
    assert_eq!(
        dims,
        vec![
            Dimension::Duration,
            Dimension::Count,
            Dimension::Celsius,
            Dimension::Money("EUR")
        ]
    );
    assert_eq!(q[0].values, vec![8.0 * 3600.0]);
    assert_eq!(q[1].values, vec![1200.0]);
    assert_eq!(q[0].text, "8 hours");
}

#[test]
fn halves_decades_and_units_with_scales_read_whole() {
    assert!(held(
        "2.5 miles, two and a half.",
        &["It lies 2.5 miles away."]
    ));
    assert!(held("An hour and a half.", &["It takes 90 minutes."]));
    assert!(held("四千二百千瓦时。", &["发电4200千瓦时。"]));
    assert!(held("上世纪70年代。", &["成立于1970年代。"]));
    assert!(held("晚上18点关门。", &["下午6点闭馆。"]));
}
