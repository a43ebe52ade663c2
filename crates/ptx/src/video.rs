//! The video instructions' opcodes and operand selectors (PTX ISA 9.7.18), decoded once for
//! every stage: `hir` checks selectors as ptxas does, the interpreter evaluates them, `lower`
//! turns them into `PRMT` extractions and `LOP3` merges.
//!
//! Opcodes: the scalar `vadd`, `vsub`, `vabsdiff`, `vmin`, `vmax`, `vshl`, `vshr`, `vmad`,
//! `vset`, and the SIMD `v<op>2` (two half-words) and `v<op>4` (four bytes) of `vadd`, `vsub`,
//! `vabsdiff`, `vmin`, `vmax`, `vset` and `vavrg`.

/// The primary operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VideoOp {
    Add,
    Sub,
    Absdiff,
    Min,
    Max,
    Avrg,
    Shl,
    Shr,
    Mad,
    Set,
}

/// A video instruction: its operation and lane count (1 scalar, 2 half-words, 4 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Video {
    pub op: VideoOp,
    pub lanes: u8,
}

impl Video {
    /// The instruction an opcode names, if it is a video instruction.
    pub fn decode(opcode: &str) -> Option<Video> {
        let (stem, lanes) = match opcode.strip_suffix('2') {
            Some(s) => (s, 2),
            None => match opcode.strip_suffix('4') {
                Some(s) => (s, 4),
                None => (opcode, 1),
            },
        };
        let op = match stem {
            "vadd" => VideoOp::Add,
            "vsub" => VideoOp::Sub,
            "vabsdiff" => VideoOp::Absdiff,
            "vmin" => VideoOp::Min,
            "vmax" => VideoOp::Max,
            "vset" => VideoOp::Set,
            "vavrg" if lanes > 1 => VideoOp::Avrg,
            "vshl" if lanes == 1 => VideoOp::Shl,
            "vshr" if lanes == 1 => VideoOp::Shr,
            "vmad" if lanes == 1 => VideoOp::Mad,
            _ => return None,
        };
        Some(Video { op, lanes })
    }
}

/// A source or destination selector: which part of a word an operand names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sel {
    /// The whole word (scalar forms without a selector).
    Word,
    /// `.b0`..`.b3` (scalar forms).
    Byte(u8),
    /// `.h0`, `.h1` (scalar forms).
    Half(u8),
    /// SIMD source selector: for each result lane, which part of `{b, a}` it takes
    /// (`.h10`, `.b3210`, ...: digit `k` of the name, from the right, is lane `k`'s part).
    Lanes([u8; 4]),
    /// SIMD destination mask: which result lanes are written (`.h10`, `.b30`, ...).
    Mask(u8),
}

impl Sel {
    /// Parses an operand's selector for an instruction with `lanes` lanes; `dest` for the
    /// destination (a scalar merge selector or a SIMD mask).
    pub fn parse(s: &str, lanes: u8, dest: bool) -> Option<Sel> {
        let (kind, digits) = (s.get(..2)?, s.get(2..)?);
        let parts: Vec<u8> = digits
            .bytes()
            .map(|c| c.wrapping_sub(b'0'))
            .collect::<Vec<_>>();
        match (lanes, kind) {
            (1, ".b") if parts.len() == 1 && parts[0] < 4 => Some(Sel::Byte(parts[0])),
            (1, ".h") if parts.len() == 1 && parts[0] < 2 => Some(Sel::Half(parts[0])),
            (2, ".h") | (4, ".b") if dest => {
                // A mask names the lanes it writes, highest first, each once.
                let mut mask = 0u8;
                let mut prev = None;
                for &p in &parts {
                    if p >= lanes || prev.is_some_and(|q| p >= q) {
                        return None;
                    }
                    mask |= 1 << p;
                    prev = Some(p);
                }
                (!parts.is_empty()).then_some(Sel::Mask(mask))
            }
            (2, ".h") | (4, ".b") if !dest => {
                // One part per lane, of the 2 * lanes parts of `{b, a}`.
                if parts.len() != usize::from(lanes) || parts.iter().any(|&p| p >= 2 * lanes) {
                    return None;
                }
                let mut sel = [0u8; 4];
                for (k, &p) in parts.iter().rev().enumerate() {
                    sel[k] = p;
                }
                Some(Sel::Lanes(sel))
            }
            _ => None,
        }
    }
}

/// Whether ptxas 13.0.88 knows `sel` as a video selector at all (else "Unknown video
/// selector"): `.b` with bytes 0-7 or `.h` with half-words 0-3, one to four of them.
pub fn known_selector(sel: &str) -> bool {
    let (kind, digits) = match (sel.get(..2), sel.get(2..)) {
        (Some(k), Some(d)) => (k, d),
        _ => return false,
    };
    let limit = match kind {
        ".b" => b'8',
        ".h" => b'4',
        _ => return false,
    };
    (1..=4).contains(&digits.len()) && digits.bytes().all(|c| (b'0'..limit).contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcodes() {
        let v = |op, lanes| Some(Video { op, lanes });
        assert_eq!(Video::decode("vadd"), v(VideoOp::Add, 1));
        assert_eq!(Video::decode("vavrg4"), v(VideoOp::Avrg, 4));
        assert_eq!(Video::decode("vset2"), v(VideoOp::Set, 2));
        assert_eq!(Video::decode("vmad"), v(VideoOp::Mad, 1));
        assert_eq!(Video::decode("vmad2"), None);
        assert_eq!(Video::decode("vavrg"), None);
        assert_eq!(Video::decode("vshl2"), None);
        assert_eq!(Video::decode("add"), None);
    }

    #[test]
    fn selectors() {
        assert_eq!(Sel::parse(".b2", 1, false), Some(Sel::Byte(2)));
        assert_eq!(Sel::parse(".h1", 1, true), Some(Sel::Half(1)));
        assert_eq!(Sel::parse(".h2", 1, false), None);
        // Lane 0 is the last digit.
        assert_eq!(Sel::parse(".h21", 2, false), Some(Sel::Lanes([1, 2, 0, 0])));
        assert_eq!(
            Sel::parse(".b7654", 4, false),
            Some(Sel::Lanes([4, 5, 6, 7]))
        );
        assert_eq!(Sel::parse(".b8654", 4, false), None);
        assert_eq!(Sel::parse(".b765", 4, false), None);
        assert_eq!(Sel::parse(".h10", 2, true), Some(Sel::Mask(0b11)));
        assert_eq!(Sel::parse(".b30", 4, true), Some(Sel::Mask(0b1001)));
        assert_eq!(Sel::parse(".b31", 4, true), Some(Sel::Mask(0b1010)));
        // A mask names each lane once, highest first.
        assert_eq!(Sel::parse(".b03", 4, true), None);
        assert_eq!(Sel::parse(".b13", 4, true), None);
        assert_eq!(Sel::parse(".h2", 2, true), None);
        assert_eq!(Sel::parse(".b3", 2, true), None);
        assert!(known_selector(".b7") && known_selector(".h3210"));
        assert!(!known_selector(".h4") && !known_selector(".b") && !known_selector(".b01234"));
        assert!(!known_selector(".x1"));
    }
}
