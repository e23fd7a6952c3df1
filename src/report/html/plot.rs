//! The HTML report's charts as inline SVG (plotters' SVG backend, no fonts needed: the browser
//! lays out the text). Three kinds: grouped horizontal bars with whiskers (throughput), grouped
//! percentile ranges on a log axis (latency p50 → p90 → p99), and series across baselines with
//! a noise band and change-point markers (history). Pure: numbers in, an `<svg>` string out.

use plotters::coord::cartesian::Cartesian2d;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Series colours (Tableau 10), also used by the page's legends.
pub const COLORS: [(u8, u8, u8); 8] = [
    (0x4c, 0x78, 0xa8),
    (0xf5, 0x85, 0x18),
    (0x54, 0xa2, 0x4b),
    (0xe4, 0x57, 0x56),
    (0xb2, 0x79, 0xa2),
    (0x72, 0xb7, 0xb2),
    (0x9d, 0x75, 0x5d),
    (0xee, 0xca, 0x3b),
];

/// The colour of series `i` as CSS `#rrggbb`.
pub fn css_color(i: usize) -> String {
    let (r, g, b) = COLORS[i % COLORS.len()];
    format!("#{r:02x}{g:02x}{b:02x}")
}

fn color(i: usize) -> RGBColor {
    let (r, g, b) = COLORS[i % COLORS.len()];
    RGBColor(r, g, b)
}

const WIDTH: u32 = 550;
const LABEL_W: u32 = 190;
/// Pixels per bar row.
const ROW_PX: f64 = 15.0;
const FONT: &str = "sans-serif";

#[derive(Debug, thiserror::Error)]
#[error("drawing a chart: {0}")]
pub struct PlotError(String);

fn err<E: std::fmt::Debug>(e: E) -> PlotError {
    PlotError(format!("{e:?}"))
}

/// One bar: the central value and an optional interval (whisker).
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub value: f64,
    pub interval: Option<(f64, f64)>,
    /// Text after the bar (e.g. the change and its interval).
    pub note: Option<String>,
}

/// Bars of one category (scenario), one per series (side); `None` where a side lacks it.
#[derive(Debug, Clone, PartialEq)]
pub struct BarGroup {
    pub label: String,
    pub bars: Vec<Option<Bar>>,
}

/// Percentiles of one latency metric for one side: (percentile, value) ascending.
#[derive(Debug, Clone, PartialEq)]
pub struct Ladder {
    pub points: Vec<(f64, f64)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LadderGroup {
    pub label: String,
    pub ladders: Vec<Option<Ladder>>,
}

/// A compact number for axis labels and bar notes.
pub fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// A value axis: linear when the values span less than 20×, else logarithmic. Either way the
/// chart's coordinate is linear in `fwd(v)`, so one drawing path serves both.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Scale {
    Linear,
    Log,
}

impl Scale {
    fn of(lo: f64, hi: f64) -> Scale {
        if lo > 0.0 && hi / lo > 20.0 {
            Scale::Log
        } else {
            Scale::Linear
        }
    }
    fn fwd(self, v: f64) -> f64 {
        match self {
            Scale::Linear => v,
            Scale::Log => v.log10(),
        }
    }
    fn inv(self, x: f64) -> f64 {
        match self {
            Scale::Linear => x,
            Scale::Log => 10f64.powf(x),
        }
    }
    /// The axis range (in coordinates) around values in [lo, hi].
    fn range(self, lo: f64, hi: f64) -> (f64, f64) {
        match self {
            Scale::Linear => (0.0, hi * 1.1),
            Scale::Log => ((lo / 1.3).log10(), (hi * 1.3).log10()),
        }
    }
    fn describe(self, unit: &str) -> String {
        match self {
            Scale::Linear => unit.to_string(),
            Scale::Log => format!("{unit} (log scale)"),
        }
    }
}

fn rows_height(groups: usize, per_group: usize) -> (f64, f64, u32) {
    let group_units = per_group.max(1) as f64 + 0.8;
    let total = groups.max(1) as f64 * group_units + 0.4;
    let height = (total * ROW_PX) as u32 + 78;
    (group_units, total, height)
}

/// Draw a group label right-aligned in the label area, centred on `y_px`.
fn group_label(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    x_px: i32,
    y_px: i32,
    text: &str,
) -> Result<(), PlotError> {
    let style = (FONT, 12)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Right, VPos::Center));
    root.draw(&Text::new(text.to_string(), (x_px - 8, y_px), style))
        .map_err(err)
}

/// A chart's drawing area: value coordinates on both axes, drawn into an SVG string.
type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// `n/a` at `at`, where a side lacks the value.
fn not_available(chart: &mut Chart<'_, '_>, at: (f64, f64)) -> Result<(), PlotError> {
    chart
        .draw_series(std::iter::once(
            EmptyElement::at(at)
                + Text::new(
                    "n/a",
                    (4, 0),
                    (FONT, 10)
                        .into_font()
                        .color(&BLACK)
                        .pos(Pos::new(HPos::Left, VPos::Center)),
                ),
        ))
        .map_err(err)?;
    Ok(())
}

/// The smallest and the largest of `all` (1 and 10 when it is empty).
fn extent(all: &[f64]) -> (f64, f64) {
    match (
        all.iter().copied().reduce(f64::min),
        all.iter().copied().reduce(f64::max),
    ) {
        (Some(a), Some(b)) => (a, b),
        _ => (1.0, 10.0),
    }
}

/// Grouped horizontal bars from zero, with whiskers for intervals.
pub fn bars(title: &str, unit: &str, groups: &[BarGroup]) -> Result<String, PlotError> {
    let per = groups.iter().map(|g| g.bars.len()).max().unwrap_or(1);
    let (gu, total, height) = rows_height(groups.len(), per);
    let xmax = groups
        .iter()
        .flat_map(|g| g.bars.iter().flatten())
        .map(|b| b.interval.map_or(b.value, |(_, hi)| hi.max(b.value)))
        .fold(0.0f64, f64::max);
    // Room after the longest bar for its value and note.
    let notes = groups
        .iter()
        .flat_map(|g| g.bars.iter().flatten())
        .any(|b| b.note.as_ref().is_some_and(|n| n.len() > 8));
    let xmax = if xmax > 0.0 {
        xmax * if notes { 1.6 } else { 1.25 }
    } else {
        1.0
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(8)
            .margin_right(16)
            .caption(title, (FONT, 15))
            .x_label_area_size(36)
            .y_label_area_size(LABEL_W)
            .build_cartesian_2d(0f64..xmax, 0f64..total)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_labels(6)
            .x_desc(unit)
            .x_label_formatter(&|v| fmt_num(*v))
            .light_line_style(RGBColor(238, 238, 238))
            .label_style((FONT, 11))
            .draw()
            .map_err(err)?;
        for (g, grp) in groups.iter().enumerate() {
            let top = total - 0.4 - g as f64 * gu;
            for (s, bar) in grp.bars.iter().enumerate() {
                let y1 = top - s as f64;
                let y0 = y1 - 0.8;
                let ym = (y0 + y1) / 2.0;
                let Some(b) = bar else {
                    not_available(&mut chart, (0.0, ym))?;
                    continue;
                };
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(0.0, y0), (b.value.max(0.0), y1)],
                        color(s).filled(),
                    )))
                    .map_err(err)?;
                let mut end = b.value;
                if let Some((lo, hi)) = b.interval {
                    end = end.max(hi);
                    let cap = 0.25;
                    chart
                        .draw_series([
                            PathElement::new(vec![(lo, ym), (hi, ym)], BLACK.stroke_width(1)),
                            PathElement::new(
                                vec![(lo, ym - cap), (lo, ym + cap)],
                                BLACK.stroke_width(1),
                            ),
                            PathElement::new(
                                vec![(hi, ym - cap), (hi, ym + cap)],
                                BLACK.stroke_width(1),
                            ),
                        ])
                        .map_err(err)?;
                }
                let text = match &b.note {
                    Some(n) => format!("{} {n}", fmt_num(b.value)),
                    None => fmt_num(b.value),
                };
                let style = (FONT, 10)
                    .into_font()
                    .color(&RGBColor(40, 40, 40))
                    .pos(Pos::new(HPos::Left, VPos::Center));
                chart
                    .draw_series(std::iter::once(
                        EmptyElement::at((end, ym)) + Text::new(text, (4, 0), style),
                    ))
                    .map_err(err)?;
            }
            let (x, _) = chart.backend_coord(&(0.0, 0.0));
            let (_, y) = chart.backend_coord(&(0.0, top - (per as f64) / 2.0));
            group_label(&root, x, y, &grp.label)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// Grouped percentile ladders on a log axis: a line from the lowest to the highest percentile,
/// a filled dot at the lowest (p50), a tick at each middle one (p90), a ring at the highest (p99).
pub fn ladders(title: &str, unit: &str, groups: &[LadderGroup]) -> Result<String, PlotError> {
    let per = groups.iter().map(|g| g.ladders.len()).max().unwrap_or(1);
    let (gu, total, height) = rows_height(groups.len(), per);
    let all: Vec<f64> = groups
        .iter()
        .flat_map(|g| g.ladders.iter().flatten())
        .flat_map(|l| l.points.iter().map(|(_, v)| *v))
        .filter(|v| *v > 0.0 && v.is_finite())
        .collect();
    let (vlo, vhi) = extent(&all);
    let scale = Scale::of(vlo, vhi);
    let (lo, hi) = scale.range(vlo, vhi);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(8)
            .margin_right(110)
            .caption(title, (FONT, 15))
            .x_label_area_size(36)
            .y_label_area_size(LABEL_W)
            .build_cartesian_2d(lo..hi, 0f64..total)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_labels(7)
            .x_desc(scale.describe(unit))
            .x_label_formatter(&|v| fmt_num(scale.inv(*v)))
            .light_line_style(RGBColor(238, 238, 238))
            .label_style((FONT, 11))
            .draw()
            .map_err(err)?;
        for (g, grp) in groups.iter().enumerate() {
            let top = total - 0.4 - g as f64 * gu;
            for (s, lad) in grp.ladders.iter().enumerate() {
                let ym = top - s as f64 - 0.4;
                let pts: Vec<(f64, f64)> = lad
                    .iter()
                    .flat_map(|l| l.points.iter().copied())
                    .filter(|(_, v)| *v > 0.0 && v.is_finite())
                    .collect();
                if pts.is_empty() {
                    not_available(&mut chart, (lo, ym))?;
                    continue;
                }
                ladder(&mut chart, scale, color(s), ym, &pts)?;
            }
            let (x, _) = chart.backend_coord(&(lo, 0.0));
            let (_, y) = chart.backend_coord(&(lo, top - (per as f64) / 2.0));
            group_label(&root, x, y, &grp.label)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// One side's ladder at height `ym`: a line from the lowest to the highest percentile, a
/// filled dot at the lowest, a tick at each middle one, a ring at the highest, and the values
/// after it. `pts` is not empty.
fn ladder(
    chart: &mut Chart<'_, '_>,
    scale: Scale,
    c: RGBColor,
    ym: f64,
    pts: &[(f64, f64)],
) -> Result<(), PlotError> {
    let x = |v: f64| scale.fwd(v);
    let (first, last) = (pts[0].1, pts[pts.len() - 1].1);
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(x(first), ym), (x(last), ym)],
            c.stroke_width(3),
        )))
        .map_err(err)?;
    for (i, (_, v)) in pts.iter().enumerate() {
        if i == 0 {
            chart
                .draw_series(std::iter::once(Circle::new((x(*v), ym), 4, c.filled())))
                .map_err(err)?;
        } else if i + 1 == pts.len() {
            chart
                .draw_series(std::iter::once(Circle::new(
                    (x(*v), ym),
                    4,
                    c.stroke_width(2),
                )))
                .map_err(err)?;
        } else {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x(*v), ym - 0.35), (x(*v), ym + 0.35)],
                    BLACK.stroke_width(2),
                )))
                .map_err(err)?;
        }
    }
    let text = pts
        .iter()
        .map(|(p, v)| format!("p{} {}", crate::record::format_percentile(*p), fmt_num(*v)))
        .collect::<Vec<_>>()
        .join(" · ");
    let style = (FONT, 10)
        .into_font()
        .color(&RGBColor(40, 40, 40))
        .pos(Pos::new(HPos::Left, VPos::Center));
    chart
        .draw_series(std::iter::once(
            EmptyElement::at((x(last), ym)) + Text::new(text, (8, 0), style),
        ))
        .map_err(err)?;
    Ok(())
}

/// One line of a history chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Trend {
    pub label: String,
    /// Colour index (stable per scenario across a model's charts; the page shows the legend).
    pub color: usize,
    /// One value per baseline (x position), `None` where the baseline lacks it.
    pub values: Vec<Option<f64>>,
    /// Noise band per segment: (first x, last x, low, high).
    pub bands: Vec<(usize, usize, f64, f64)>,
    /// Change points: (x of the first point after the step, label).
    pub changes: Vec<(usize, String)>,
}

/// History line `i` (its place staggers the change labels): noise bands, the line through
/// the present points, and a marker before each change point. `(lo, hi)` is the value axis.
fn trend(
    chart: &mut Chart<'_, '_>,
    scale: Scale,
    (lo, hi): (f64, f64),
    i: usize,
    l: &Trend,
) -> Result<(), PlotError> {
    let y = |v: f64| scale.fwd(v);
    let c = color(l.color);
    for (a, b, blo, bhi) in &l.bands {
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [
                    (*a as f64 - 0.3, y(*blo).max(lo)),
                    (*b as f64 + 0.3, y(*bhi).min(hi)),
                ],
                c.mix(0.15).filled(),
            )))
            .map_err(err)?;
    }
    // Lines connect consecutive present points only.
    let pts: Vec<(f64, f64)> = l
        .values
        .iter()
        .enumerate()
        .filter_map(|(x, v)| v.map(|v| (x as f64, y(v))))
        .collect();
    chart
        .draw_series(std::iter::once(PathElement::new(
            pts.clone(),
            c.stroke_width(2),
        )))
        .map_err(err)?;
    chart
        .draw_series(pts.iter().map(|p| Circle::new(*p, 3, c.filled())))
        .map_err(err)?;
    for (x, text) in &l.changes {
        let y_top = hi - (hi - lo) * 0.02;
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(*x as f64 - 0.5, lo), (*x as f64 - 0.5, y_top)],
                RGBColor(200, 30, 30).stroke_width(1),
            )))
            .map_err(err)?;
        let style = (FONT, 10)
            .into_font()
            .color(&RGBColor(200, 30, 30))
            .pos(Pos::new(HPos::Left, VPos::Top));
        chart
            .draw_series(std::iter::once(
                EmptyElement::at((*x as f64 - 0.5, y_top))
                    + Text::new(text.clone(), (3, 2 + 12 * i as i32), style),
            ))
            .map_err(err)?;
    }
    Ok(())
}

/// Series across baselines on a log axis, with noise bands and change-point markers.
pub fn trends(
    title: &str,
    unit: &str,
    xlabels: &[String],
    lines: &[Trend],
) -> Result<String, PlotError> {
    let all: Vec<f64> = lines
        .iter()
        .flat_map(|l| {
            l.values
                .iter()
                .flatten()
                .copied()
                .chain(l.bands.iter().flat_map(|b| [b.2, b.3]))
        })
        .filter(|v| *v > 0.0 && v.is_finite())
        .collect();
    let (vlo, vhi) = extent(&all);
    let scale = Scale::of(vlo, vhi);
    let (lo, hi) = match scale {
        // Around the values, not from zero: the steps are what matters here.
        Scale::Linear => {
            let pad = ((vhi - vlo) * 0.15).max(vhi.abs() * 0.05);
            ((vlo - pad).max(0.0), vhi + pad)
        }
        Scale::Log => scale.range(vlo, vhi),
    };
    let n = xlabels.len().max(1);
    let height = 300;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(8)
            .margin_right(24)
            .caption(title, (FONT, 15))
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), lo..hi)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_labels(6)
            .y_desc(scale.describe(unit))
            .y_label_formatter(&|v| fmt_num(scale.inv(*v)))
            .light_line_style(RGBColor(238, 238, 238))
            .label_style((FONT, 11))
            .draw()
            .map_err(err)?;
        for (i, l) in lines.iter().enumerate() {
            trend(&mut chart, scale, (lo, hi), i, l)?;
        }
        let style = (FONT, 11)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Top));
        for (x, label) in xlabels.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(x as f64, lo));
            root.draw(&Text::new(label.clone(), (px, py + 6), style.clone()))
                .map_err(err)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_draw_rectangles_whiskers_and_labels() {
        let svg = bars(
            "Output throughput",
            "tok/s",
            &[
                BarGroup {
                    label: "random-in1024-out128-n100".into(),
                    bars: vec![
                        Some(Bar {
                            value: 1280.0,
                            interval: Some((1200.0, 1300.0)),
                            note: None,
                        }),
                        Some(Bar {
                            value: 1024.0,
                            interval: None,
                            note: Some("−20.0%".into()),
                        }),
                    ],
                },
                BarGroup {
                    label: "sharegpt-n10".into(),
                    bars: vec![
                        None,
                        Some(Bar {
                            value: 5.0,
                            interval: None,
                            note: None,
                        }),
                    ],
                },
            ],
        )
        .unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..80]);
        assert!(svg.contains("random-in1024-out128-n100"));
        assert!(svg.contains("−20.0%"));
        assert!(svg.contains("n/a"));
        // three bars, each a filled rect in its series colour
        assert_eq!(
            svg.matches("fill=\"#4C78A8\"").count() + svg.matches("fill=\"#4c78a8\"").count(),
            1,
            "{svg}"
        );
    }

    #[test]
    fn ladders_and_trends_render() {
        let svg = ladders(
            "TTFT",
            "ms",
            &[LadderGroup {
                label: "s".into(),
                ladders: vec![
                    Some(Ladder {
                        points: vec![(50.0, 10.0), (90.0, 20.0), (99.0, 40.0)],
                    }),
                    None,
                ],
            }],
        )
        .unwrap();
        assert!(svg.contains("<circle"));
        assert!(svg.contains("p99 40.0"));
        let svg = trends(
            "t",
            "tok/s",
            &["v1".into(), "v2".into(), "v3".into()],
            &[Trend {
                label: "a".into(),
                color: 0,
                values: vec![Some(1.0), None, Some(2.0)],
                bands: vec![(0, 0, 0.9, 1.1), (2, 2, 1.8, 2.2)],
                changes: vec![(2, "+100%".into())],
            }],
        )
        .unwrap();
        assert!(svg.contains("+100%") && svg.contains("v2"));
        assert!(fmt_num(123456.0) == "123k" && fmt_num(0.5) == "0.500");
    }
}
