//! Parsing of the text tables in `data/`.

use std::collections::HashMap;
use std::fmt;

use crate::{
    Directive, DirectiveKind, Form, Group, Isa, OperandKind, OperandKinds, OperandSpec, PtxVersion,
    Sm, SpecialRegister, SregShape,
};

/// A malformed table line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableError {
    pub table: &'static str,
    pub line: u32,
    pub message: String,
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.table, self.line, self.message)
    }
}

fn lines(text: &'static str) -> impl Iterator<Item = (u32, &'static str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i as u32 + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
}

pub(crate) fn parse(
    isa: &'static str,
    sregs: &'static str,
    dirs: &'static str,
) -> Result<Isa, TableError> {
    let err = |table: &'static str, line: u32, message: String| TableError {
        table,
        line,
        message,
    };
    let mut targets = Vec::new();
    let mut sets: Vec<(&'static str, Vec<&'static str>)> = Vec::new();
    let mut forms = Vec::new();
    for (n, l) in lines(isa) {
        let e = |m: String| err("isa.txt", n, m);
        if let Some(rest) = l.strip_prefix("sm ") {
            let mut it = rest.split_whitespace();
            let sm = it
                .next()
                .and_then(parse_sm)
                .ok_or_else(|| e("bad target".into()))?;
            let v = it
                .next()
                .and_then(PtxVersion::parse)
                .ok_or_else(|| e("bad version".into()))?;
            targets.push((sm, v));
            continue;
        }
        if let Some(rest) = l.strip_prefix("modset ") {
            let (name, body) = rest
                .split_once('=')
                .ok_or_else(|| e("set without `=`".into()))?;
            let mods: Vec<&'static str> = body.split_whitespace().collect();
            if let Some(bad) = mods.iter().find(|m| !m.starts_with('.')) {
                return Err(e(format!("modifier `{bad}` lacks its dot")));
            }
            sets.push((name.trim(), mods));
            continue;
        }
        forms.push(parse_form(l, n, &sets).map_err(e)?);
    }
    let mut by_opcode: HashMap<&'static str, Vec<usize>> = HashMap::new();
    for (i, f) in forms.iter().enumerate() {
        by_opcode.entry(f.opcode).or_default().push(i);
    }

    let mut sreg_list = Vec::new();
    for (n, l) in lines(sregs) {
        let e = |m: &str| err("sregs.txt", n, m.to_string());
        let mut it = l.split_whitespace();
        let name = it.next().ok_or_else(|| e("empty"))?;
        let ty = it.next().ok_or_else(|| e("no type"))?;
        let shape = match it.next().ok_or_else(|| e("no shape"))? {
            "s" => SregShape::Scalar,
            "xyz" => SregShape::Xyz,
            s => {
                let r = s.strip_prefix("n=").ok_or_else(|| e("bad shape"))?;
                let (lo, hi) = r.split_once("..").ok_or_else(|| e("bad range"))?;
                SregShape::Numbered {
                    lo: lo.parse().map_err(|_| e("bad range"))?,
                    hi: hi.parse().map_err(|_| e("bad range"))?,
                }
            }
        };
        let min_ptx = it
            .next()
            .and_then(PtxVersion::parse)
            .ok_or_else(|| e("bad version"))?;
        let min_sm = it
            .next()
            .and_then(parse_sm)
            .ok_or_else(|| e("bad target"))?;
        let section = rest_after(l, 5).ok_or_else(|| e("no section"))?;
        sreg_list.push(SpecialRegister {
            name,
            ty,
            shape,
            min_ptx,
            min_sm,
            section,
        });
    }

    let mut dir_list = Vec::new();
    for (n, l) in lines(dirs) {
        let e = |m: &str| err("directives.txt", n, m.to_string());
        let mut it = l.split_whitespace();
        let name = it.next().ok_or_else(|| e("empty"))?;
        let kind = match it.next().ok_or_else(|| e("no kind"))? {
            "module" => DirectiveKind::Module,
            "func" => DirectiveKind::Func,
            "perf" => DirectiveKind::Perf,
            "space" => DirectiveKind::Space,
            "link" => DirectiveKind::Link,
            "debug" => DirectiveKind::Debug,
            "misc" => DirectiveKind::Misc,
            _ => return Err(e("bad kind")),
        };
        let min_ptx = it
            .next()
            .and_then(PtxVersion::parse)
            .ok_or_else(|| e("bad version"))?;
        let min_sm = it
            .next()
            .and_then(parse_sm)
            .ok_or_else(|| e("bad target"))?;
        let section = rest_after(l, 4).ok_or_else(|| e("no section"))?;
        dir_list.push(Directive {
            name,
            kind,
            min_ptx,
            min_sm,
            section,
        });
    }

    Ok(Isa {
        forms,
        by_opcode,
        targets,
        sets,
        sregs: sreg_list,
        directives: dir_list,
    })
}

/// The text of `l` after its first `n` whitespace-separated fields.
fn rest_after(l: &'static str, n: usize) -> Option<&'static str> {
    let mut s = l;
    for _ in 0..n {
        s = s.trim_start();
        let end = s.find(char::is_whitespace)?;
        s = &s[end..];
    }
    let s = s.trim();
    (!s.is_empty()).then_some(s)
}

fn parse_form(
    l: &'static str,
    line: u32,
    sets: &[(&'static str, Vec<&'static str>)],
) -> Result<Form, String> {
    let (head, tail) = l.split_once(" : ").ok_or("form without ` : `")?;
    let mut parts = tail.split('|');
    let ops = parts.next().ok_or("form without operands")?;
    let gate = parts.next().ok_or("form without `| PTX SM`")?;
    let section = parts.next().ok_or("form without section")?.trim();
    if parts.next().is_some() {
        return Err("too many `|` fields".into());
    }
    let mut words = head.split_whitespace();
    let opcode = words.next().ok_or("form without opcode")?;
    let set = |name: &str| {
        sets.iter()
            .find(|(n, _)| *n == name)
            .map(|(_, m)| m.clone())
            .ok_or_else(|| format!("undefined set `${name}`"))
    };
    let mut groups = Vec::new();
    for w in words {
        let (required, inner) = if let Some(s) = w.strip_prefix('{') {
            (
                true,
                s.strip_suffix('}')
                    .ok_or_else(|| format!("unclosed `{w}`"))?,
            )
        } else if let Some(s) = w.strip_prefix('[') {
            (
                false,
                s.strip_suffix(']')
                    .ok_or_else(|| format!("unclosed `{w}`"))?,
            )
        } else if w.starts_with('$') {
            (true, w)
        } else if w.starts_with('.') {
            // A bare modifier is a required single choice.
            (true, w)
        } else {
            return Err(format!("bad modifier group `{w}`"));
        };
        let choices = if let Some(name) = inner.strip_prefix('$') {
            set(name)?
        } else {
            let c: Vec<&'static str> = inner.split('|').collect();
            if let Some(bad) = c.iter().find(|m| !m.starts_with('.')) {
                return Err(format!("modifier `{bad}` lacks its dot"));
            }
            c
        };
        groups.push(Group { required, choices });
    }
    let mut operands = Vec::new();
    for w in ops.split_whitespace() {
        let (name, kinds) = w
            .split_once(':')
            .ok_or_else(|| format!("operand `{w}` without kinds"))?;
        let (kinds, optional, variadic) = if let Some(k) = kinds.strip_suffix('?') {
            (k, true, false)
        } else if let Some(k) = kinds.strip_suffix('*') {
            (k, false, true)
        } else {
            (kinds, false, false)
        };
        let mut set = OperandKinds::default();
        for c in kinds.chars() {
            set.insert(
                OperandKind::from_letter(c).ok_or_else(|| format!("bad operand kind `{c}`"))?,
            );
        }
        if set.is_empty() {
            return Err(format!("operand `{name}` accepts nothing"));
        }
        operands.push(OperandSpec {
            name,
            kinds: set,
            optional,
            variadic,
        });
    }
    let mut g = gate.split_whitespace();
    let min_ptx = g
        .next()
        .and_then(PtxVersion::parse)
        .ok_or("bad PTX version")?;
    let min_sm = g.next().and_then(parse_sm).ok_or("bad SM")?;
    if g.next().is_some() {
        return Err("extra words after PTX SM".into());
    }
    Ok(Form {
        opcode,
        groups,
        operands,
        min_ptx,
        min_sm,
        section,
        line,
    })
}

/// An SM in a table: `sm_90a` or the short `90a`.
fn parse_sm(s: &str) -> Option<Sm> {
    Sm::parse(s).or_else(|| Sm::parse_short(s))
}
