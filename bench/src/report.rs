//! The lines a run measured, printed as they come and once more as a Markdown table.

/// One measured (or unmeasured) quantity.
pub struct Line {
    pub row: String,
    pub backend: String,
    pub metric: String,
    pub value: String,
    pub ceiling: String,
    pub ratio: String,
}

#[derive(Default)]
pub struct Report {
    lines: Vec<Line>,
}

impl Report {
    /// Records a measurement; `ceiling` and `ratio` are "—" where none applies.
    pub fn add(
        &mut self,
        row: &str,
        backend: &str,
        metric: &str,
        value: String,
        ceiling: String,
        ratio: String,
    ) {
        let line = Line {
            row: row.to_owned(),
            backend: backend.to_owned(),
            metric: metric.to_owned(),
            value,
            ceiling,
            ratio,
        };
        println!(
            "  [{}] {} {}: {}{}{}",
            line.backend,
            line.row,
            line.metric,
            line.value,
            if line.ceiling == "—" {
                String::new()
            } else {
                format!("; ceiling {}", line.ceiling)
            },
            if line.ratio == "—" {
                String::new()
            } else {
                format!("; ratio {}", line.ratio)
            },
        );
        self.lines.push(line);
    }

    /// Records a quantity without a ceiling.
    pub fn value(&mut self, row: &str, backend: &str, metric: &str, value: String) {
        self.add(row, backend, metric, value, dash(), dash());
    }

    /// Records that a row could not run, and why.
    pub fn not_measured(&mut self, row: &str, backend: &str, why: &str) {
        self.value(row, backend, "not measured", why.replace('\n', " "));
    }

    pub fn markdown(&self) -> String {
        let mut out = String::from(
            "| row | backend | metric | value | ceiling | ratio |\n| --- | --- | --- | --- | --- | --- |\n",
        );
        for l in &self.lines {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                cell(&l.row),
                cell(&l.backend),
                cell(&l.metric),
                cell(&l.value),
                cell(&l.ceiling),
                cell(&l.ratio)
            ));
        }
        out
    }
}

pub fn dash() -> String {
    "—".to_owned()
}

/// A ratio as a percentage when below 1, else as a multiple.
pub fn ratio(value: f64, ceiling: f64) -> String {
    if ceiling <= 0.0 || !value.is_finite() {
        return dash();
    }
    let r = value / ceiling;
    if r < 1.0 {
        format!("{:.1} %", r * 100.0)
    } else {
        format!("{r:.2}×")
    }
}

/// Thousands separated by commas, for rates.
pub fn count(v: f64) -> String {
    let n = v.round() as u64;
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_below_one_are_percentages_and_above_are_multiples() {
        assert_eq!(ratio(25.0, 100.0), "25.0 %");
        assert_eq!(ratio(300.0, 100.0), "3.00×");
        assert_eq!(ratio(1.0, 0.0), "—");
        assert_eq!(count(1234567.4), "1,234,567");
        assert_eq!(count(999.0), "999");
    }

    #[test]
    fn the_table_escapes_pipes_so_that_each_line_keeps_six_cells() {
        let mut r = Report::default();
        r.value("1 ceiling", "sqlite", "query {a|b}", "1".into());
        let table = r.markdown();
        let last = table.lines().last().unwrap();
        assert_eq!(last.matches(" | ").count(), 5, "{last}");
    }
}
