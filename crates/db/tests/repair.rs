//! `emit::encode_checked` repairs, in one pass, what a delay repairs: a schedule whose stalls
//! were cut below the learned latencies comes back free of hazards.

use db::{RootDatabase, Sm, Target, allocated, kernel_targets, optimized, scheduled};

const KERNEL: &str = r#"
.version 8.0
.target sm_80
.address_size 64

.visible .entry chain(.param .u64 p, .param .u32 n)
{
    .reg .b32 %r<8>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [p];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %tid.x;
    mad.lo.u32 %r3, %r2, %r1, 7;
    mul.lo.u32 %r4, %r3, %r3;
    add.u32 %r5, %r4, %r2;
    cvt.rn.f32.u32 %f1, %r5;
    add.f32 %f2, %f1, %f1;
    mul.wide.u32 %rd2, %r2, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.f32 [%rd3], %f2;
    ret;
}
"#;

#[test]
fn cut_stalls_are_repaired_in_one_pass() {
    for sm in ["sm_80", "sm_90"] {
        let mut db = RootDatabase::default();
        let file = db.add_file("chain.ptx", KERNEL.as_bytes());
        let t = Target::new(Sm::parse(sm).unwrap());
        let kt = kernel_targets(&db, file, &t)[0];
        let f = optimized(&db, kt).as_ref().unwrap();
        let a = allocated(&db, kt).as_ref().unwrap();
        assert!(a.spill.is_none());
        let mut s = scheduled(&db, kt).as_ref().unwrap().clone();
        for (_, c) in &mut s.slots {
            c.stall = c.stall.min(1);
        }
        let profile = t.sm.profile().unwrap();
        let cut = emit::encode(f, &|v| a.get(v), &s, profile).unwrap();
        let before = hazard::check(sm, &sass::words(&cut.code)).unwrap();
        assert!(
            before
                .iter()
                .any(|h| h.kind == hazard::HazardKind::RawStall),
            "{sm}: cutting the stalls makes no hazard: the test is vacuous"
        );
        assert!(
            before.iter().all(|h| h.deficit.is_some()),
            "{sm}: {before:?}"
        );
        let fixed = emit::encode_checked(f, &|v| a.get(v), &s, profile).unwrap();
        let after = hazard::check(sm, &sass::words(&fixed.code)).unwrap();
        assert!(after.is_empty(), "{sm}: {after:?}");
    }
}
