//! Integer division and remainder (`div`, `rem`): ptxas's reciprocal-based sequences.

use super::*;

impl Cx {
    /// Unsigned 32-bit division: ptxas's sequence (reciprocal estimate rounded up, one Newton
    /// step, two corrections; a zero divisor gives all ones).
    /// Returns (quotient, remainder) registers. Every intermediate is a fresh temporary, so
    /// the internal guards are safe under an outer guard.
    pub(crate) fn udivrem(&mut self, a: Reg, b: Reg) -> (Reg, Reg) {
        let t = |cx: &mut Self| Reg::v(cx.tmp(1), 1);
        let rz = Operand::rz;
        let f = t(self);
        self.push(Inst::new(
            op!("I2F.U32.RP"),
            vec![Operand::r(f), Operand::r(b)],
            vec![0],
        ));
        self.push(Inst::new(
            op!("MUFU.RCP"),
            vec![Operand::r(f), Operand::r(f)],
            vec![0],
        ));
        let e = t(self);
        self.push(Inst::new(
            op!("IADD3"),
            vec![
                Operand::r(e),
                Operand::r(f),
                Operand::Imm(0x0fff_fffe),
                rz(),
            ],
            vec![0],
        ));
        let q0 = t(self);
        self.push(Inst::new(
            op!("F2I.FTZ.U32.TRUNC.NTZ"),
            vec![Operand::r(q0), Operand::r(e)],
            vec![0],
        ));
        let nq0 = t(self);
        self.push(Inst::new(
            op!("IADD3"),
            vec![Operand::r(nq0), Operand::neg(q0), rz(), rz()],
            vec![0],
        ));
        let w = self.tmp(2);
        self.imad_wide(Reg::v(w, 2), nq0, b, false, None);
        // The Newton step q1 = q0 + hi(q0 * (-q0 * b)). ptxas folds the `+ q0` into the
        // 64-bit addend of `IMAD.HI.U32` (a register pair {q0, 0}); a separate add keeps the
        // addend RZ, whose meaning does not depend on how the pair is read.
        let h = t(self);
        self.push(Inst::new(
            op!("IMAD.HI.U32"),
            vec![
                Operand::r(h),
                Operand::r(q0),
                Operand::r(Reg::part(w, 0)),
                rz(),
            ],
            vec![0],
        ));
        let q1 = t(self);
        self.push(Inst::new(
            op!("IADD3"),
            vec![Operand::r(q1), Operand::r(q0), Operand::r(h), rz()],
            vec![0],
        ));
        let q = t(self);
        self.push(Inst::new(
            op!("IMAD.HI.U32"),
            vec![Operand::r(q), Operand::r(q1), Operand::r(a), rz()],
            vec![0],
        ));
        let w2 = self.tmp(2);
        self.imad_wide(Reg::v(w2, 2), q, b, false, None);
        let r = t(self);
        self.push(Inst::new(
            op!("IADD3"),
            vec![
                Operand::r(r),
                Operand::r(a),
                Operand::neg(Reg::part(w2, 0)),
                rz(),
            ],
            vec![0],
        ));
        let one = t(self);
        self.mov_imm(one, 1);
        for _ in 0..2 {
            let p = Reg::v(self.ptmp(), 1);
            self.push(Inst::new(
                op!("ISETP.GE.U32.AND"),
                vec![
                    Operand::r(p),
                    Operand::pt(),
                    Operand::r(r),
                    Operand::r(b),
                    Operand::pt(),
                ],
                vec![0],
            ));
            self.guarded(
                Inst::new(
                    op!("IADD3"),
                    vec![Operand::r(r), Operand::r(r), Operand::neg(b), rz()],
                    vec![0],
                ),
                p,
            );
            self.guarded(
                Inst::new(
                    op!("IADD3"),
                    vec![Operand::r(q), Operand::r(q), Operand::r(one), rz()],
                    vec![0],
                ),
                p,
            );
        }
        // b == 0: both results are ~b (all ones), as ptxas makes them.
        let nz = Reg::v(self.ptmp(), 1);
        self.push(Inst::new(
            op!("ISETP.NE.U32.AND"),
            vec![
                Operand::r(nz),
                Operand::pt(),
                rz(),
                Operand::r(b),
                Operand::pt(),
            ],
            vec![0],
        ));
        let nb = t(self);
        self.push(Inst::new(
            op!("LOP3.LUT"),
            vec![
                Operand::r(nb),
                rz(),
                Operand::r(b),
                rz(),
                Operand::Hex(0x33),
                Operand::not(Reg::Zero(Class::P)),
            ],
            vec![0],
        ));
        let (qf, rf) = (t(self), t(self));
        for (dst, v) in [(qf, q), (rf, r)] {
            self.push(Inst::new(
                op!("SEL"),
                vec![
                    Operand::r(dst),
                    Operand::r(nb),
                    Operand::r(v),
                    Operand::not(nz),
                ],
                vec![0],
            ));
        }
        (qf, rf)
    }

    /// Signed 32-bit division and remainder through the unsigned sequence on magnitudes:
    /// the quotient is negated when the signs differ (truncation toward zero), the remainder
    /// takes the dividend's sign.
    pub(crate) fn sdivrem(&mut self, d: Reg, a: Reg, b: Reg, want_rem: bool) {
        let t = |cx: &mut Self| Reg::v(cx.tmp(1), 1);
        let abs = |cx: &mut Self, x: Reg| -> (Reg, Reg) {
            let neg = Reg::v(cx.ptmp(), 1);
            cx.push(Inst::new(
                op!("ISETP.LT.AND"),
                vec![
                    Operand::r(neg),
                    Operand::pt(),
                    Operand::r(x),
                    Operand::rz(),
                    Operand::pt(),
                ],
                vec![0],
            ));
            let m = t(cx);
            cx.push(Inst::new(
                op!("IADD3"),
                vec![Operand::r(m), Operand::neg(x), Operand::rz(), Operand::rz()],
                vec![0],
            ));
            let out = t(cx);
            cx.push(Inst::new(
                op!("SEL"),
                vec![
                    Operand::r(out),
                    Operand::r(m),
                    Operand::r(x),
                    Operand::r(neg),
                ],
                vec![0],
            ));
            (out, neg)
        };
        let (ua, na) = abs(self, a);
        let (ub, nb) = abs(self, b);
        let (q, r) = self.udivrem(ua, ub);
        let (v, neg) = if want_rem {
            (r, na)
        } else {
            let x = Reg::v(self.ptmp(), 1);
            self.push(Inst::new(
                op!("PLOP3.LUT"),
                vec![
                    Operand::r(x),
                    Operand::pt(),
                    Operand::r(na),
                    Operand::r(nb),
                    Operand::pt(),
                    Operand::Hex(0x3c),
                    Operand::Hex(0),
                ],
                vec![0],
            ));
            (q, x)
        };
        let m = t(self);
        self.push(Inst::new(
            op!("IADD3"),
            vec![Operand::r(m), Operand::neg(v), Operand::rz(), Operand::rz()],
            vec![0],
        ));
        self.push(Inst::new(
            op!("SEL"),
            vec![Operand::r(d), Operand::r(m), Operand::r(v), Operand::r(neg)],
            vec![0],
        ));
    }
}
