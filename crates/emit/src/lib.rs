//! Emission: scheduled machine IR → SASS words (through `crates/sass`'s assembler) and
//! kernels → a cubin (through `crates/cubin`'s builder).
//!
//! Each slot prints as nvdisasm text with an explicit control field and is assembled with
//! `sass::encode::assemble_line`, which only accepts a word that decodes back to the same
//! text; an instruction form the learned tables cannot encode is an `unsupported: encoding
//! ...` error, never a wrong word. Branch targets print as nvdisasm names them (`.L_x_N` in
//! the order of first reference), so the listing is directly comparable with `nvdisasm -c`. The code is
//! closed like ptxas closes it: `BRA` to itself, then at least 8 `NOP`s up to a multiple of
//! 128 bytes.

#![forbid(unsafe_code)]

use ir::{Func, Mnemonic, Operand, VReg, op};
use sass::Control;
use sched::{Schedule, Slot};
use target::{Profile, Sm, SmVariant};

/// One kernel's machine code.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Encoded {
    /// Little-endian 128-bit words.
    pub code: Vec<u8>,
    /// nvdisasm-style lines `/*0040*/ IADD3 R0, R1, R2, RZ ;` (no control field).
    pub listing: Vec<String>,
    /// Per listing line: the PTX construct it came from (a range in the kernel's tree as
    /// lowered; an inlined callee's instructions carry their call's range), `None` for the
    /// closing branch, padding and scheduling `NOP`s.
    pub origins: Vec<Option<(u32, u32)>>,
    /// Byte offsets of `EXIT` instructions.
    pub exit_offsets: Vec<u32>,
    /// Byte offsets of `S2R SR_CTAID.*` instructions.
    pub s2rctaid_offsets: Vec<u32>,
    /// Byte offsets of system calls (`CALL.ABS.NOINC`, EIATTR_SYSCALL_OFFSETS).
    pub syscall_offsets: Vec<u32>,
    /// Instructions of the kernel proper (without the closing branch and padding).
    pub instructions: usize,
    /// The code traps (`BPT.TRAP`, PTX `trap`).
    pub traps: bool,
}

/// An emission failure and the source range of the instruction responsible, if known.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EmitError {
    pub message: String,
    pub origin: Option<(u32, u32)>,
}

/// Assembles one instruction with `control`. Instructions without a branch target do not
/// depend on their address, and the encoding the assembler picks does not depend on the
/// control field (it is not printed): their words come from a process-wide cache keyed by
/// SM and text, with the control bits set afterwards (kiln prints no `.reuse` and needs no
/// hidden bits, so the control field is exactly `control`).
fn assemble_cached(
    table: &sass::Table,
    sm: u16,
    text: &str,
    control: Control,
    pc: u64,
    resolve: &dyn Fn(&str) -> Option<i128>,
) -> Result<u128, String> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    if text.contains("`(") {
        let line = format!("{} {text}", control.to_text());
        return sass::encode::assemble_line(table, &line, pc, resolve);
    }
    type Cache = Mutex<HashMap<(u16, String), Result<u128, String>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let key = (sm, text.to_string());
    let hit = cache.lock().map_or(None, |c| c.get(&key).cloned());
    let base = match hit {
        Some(r) => r,
        None => {
            let r = sass::encode::assemble_line(table, text, 0, resolve);
            if let Ok(mut c) = cache.lock() {
                if c.len() > 1 << 20 {
                    c.clear();
                }
                c.insert(key, r.clone());
            }
            r
        }
    };
    Ok((base? & !sass::control::CONTROL_MASK) | control.to_bits())
}

/// An `IADD3` whose `Label` operand stands for the distance in bytes from the last `LEPC` to
/// the label (sm_80 system calls compute their return address so, `lower`'s `syscall.rs`):
/// printed as that number, not as a branch target.
fn is_distance(i: &ir::Inst) -> bool {
    i.mnemonic() == Mnemonic::IADD3 && i.operands.iter().any(|o| matches!(o, Operand::Label(_)))
}

/// Encodes a scheduled function for the SM of `profile`.
pub fn encode(
    f: &Func,
    assign: &dyn Fn(VReg) -> u8,
    sched: &Schedule,
    profile: &Profile,
) -> Result<Encoded, EmitError> {
    let sm = profile.number;
    let table = sass::table(&profile.name()).ok_or_else(|| EmitError {
        message: format!("unsupported: no SASS table for sm_{sm}"),
        origin: None,
    })?;
    let n = sched.slots.len();
    let block_addr = |pos: usize| (sched.block_start[pos] * 16) as u64;
    let pos_of = |b: ir::Block| f.order.iter().position(|x| *x == b).unwrap_or(0);
    let mut targets: Vec<u64> = Vec::new();
    for (slot, _) in &sched.slots {
        if let Slot::Inst { block, index } = slot {
            let i = &f.blocks[f.order[*block]].insts[*index];
            if is_distance(i) {
                continue;
            }
            for o in &i.operands {
                if let Operand::Label(t) = o {
                    targets.push(block_addr(pos_of(*t)));
                }
            }
        }
    }
    let trailer = (n * 16) as u64;
    targets.push(trailer);
    // nvdisasm numbers labels in the order of their first reference.
    let mut seen = std::collections::HashSet::new();
    targets.retain(|a| seen.insert(*a));
    let name_of = |addr: u64| {
        let k = targets.iter().position(|a| *a == addr).unwrap_or(0);
        format!(".L_x_{k}")
    };
    let resolve = |name: &str| {
        let k: usize = name.strip_prefix(".L_x_")?.parse().ok()?;
        targets.get(k).map(|a| *a as i128)
    };
    let mut out = Encoded {
        code: Vec::with_capacity((n + 16) * 16),
        listing: Vec::new(),
        origins: Vec::new(),
        exit_offsets: Vec::new(),
        s2rctaid_offsets: Vec::new(),
        syscall_offsets: Vec::new(),
        instructions: n,
        traps: false,
    };
    let push = |text: String,
                control: Control,
                origin: Option<(u32, u32)>,
                out: &mut Encoded|
     -> Result<(), EmitError> {
        let pc = out.code.len() as u64;
        let w =
            assemble_cached(table, sm, &text, control, pc, &resolve).map_err(|e| EmitError {
                message: format!("unsupported: encoding of `{text}` on sm_{sm} ({e})"),
                origin,
            })?;
        out.code.extend_from_slice(&w.to_le_bytes());
        out.listing.push(format!("/*{pc:04x}*/ {text} ;"));
        out.origins.push(origin);
        Ok(())
    };
    // The address of the last `LEPC` (sm_80 system calls: see [`is_distance`]).
    let mut lepc: Option<u64> = None;
    for (slot, c) in &sched.slots {
        let control = Control {
            stall: c.stall,
            yield_bit: c.yield_bit,
            write_sb: c.write_sb,
            read_sb: c.read_sb,
            wait_mask: c.wait_mask,
            ..Control::default()
        };
        let pc = out.code.len() as u32;
        let (text, origin) = match slot {
            Slot::Nop => ("NOP".to_string(), None),
            Slot::Inst { block, index } => {
                let i = &f.blocks[f.order[*block]].insts[*index];
                if i.mnemonic() == Mnemonic::EXIT {
                    out.exit_offsets.push(pc);
                }
                if i.op == op!("BPT.TRAP") {
                    out.traps = true;
                }
                if i.is_system_call() {
                    out.syscall_offsets.push(pc);
                }
                if i.mnemonic() == Mnemonic::S2R
                    && i.operands
                        .iter()
                        .any(|o| matches!(o, Operand::Special(s) if s.starts_with("SR_CTAID")))
                {
                    out.s2rctaid_offsets.push(pc);
                }
                if i.mnemonic() == Mnemonic::LEPC {
                    lepc = Some(u64::from(pc));
                }
                let text = if is_distance(i) {
                    let from = lepc.ok_or_else(|| EmitError {
                        message: "internal: a return-point distance without a LEPC".into(),
                        origin: i.origin,
                    })?;
                    ir::inst_text(f, i, Some(assign), &|b| {
                        format!("{:#x}", block_addr(pos_of(b)) - from)
                    })
                } else {
                    ir::inst_text(f, i, Some(assign), &|b| {
                        format!("`({})", name_of(block_addr(pos_of(b))))
                    })
                };
                (text, i.origin)
            }
        };
        push(text, control, origin, &mut out)?;
    }
    let idle = Control {
        write_sb: 7,
        read_sb: 7,
        ..Control::default()
    };
    push(format!("BRA `({})", name_of(trailer)), idle, None, &mut out)?;
    let mut nops = 0;
    while nops < 8 || !out.code.len().is_multiple_of(128) {
        push("NOP".into(), idle, None, &mut out)?;
        nops += 1;
    }
    Ok(out)
}

/// Encodes like [`encode`], then runs the hazard checker (`crates/hazard`, latency tables
/// learned from ptxas's output) where the SM has a table. What a delay repairs — a read too
/// soon after a fixed-latency write, an overwrite too soon after a read, a wait too soon
/// after the scoreboard was set — is repaired once, all at a time, by inserting `NOP`s before
/// each such instruction for the cycles the checker reports missing ([`hazard::Hazard`]'s
/// `deficit`); more delay before an instruction never makes another hazard, and the repaired
/// code is checked again. Any other hazard (a missing scoreboard wait), or one left after the
/// repair, is a bug in the scheduler and is reported as an error rather than emitted.
pub fn encode_checked(
    f: &Func,
    assign: &dyn Fn(VReg) -> u8,
    sched: &Schedule,
    profile: &Profile,
) -> Result<Encoded, EmitError> {
    let name = profile.name();
    let e = encode(f, assign, sched, profile)?;
    if hazard::latency_table(&name).is_none() {
        return Ok(e);
    }
    let hazards = check(&name, &e)?;
    if hazards.is_empty() {
        return Ok(e);
    }
    let origin = |s: &Schedule, h: &hazard::Hazard| match s.slots.get(h.index) {
        Some((Slot::Inst { block, index }, _)) => f.blocks[f.order[*block]].insts[*index].origin,
        _ => None,
    };
    // Every delay at once, from the last slot back so that earlier indices stay valid.
    let mut fixes: Vec<(usize, u16)> = Vec::new();
    for h in &hazards {
        let deficit = h.deficit.filter(|_| h.index < sched.slots.len());
        let Some(cycles) = deficit else {
            return Err(EmitError {
                message: format!("control codes rejected by the hazard checker: {h}"),
                origin: origin(sched, h),
            });
        };
        match fixes.iter_mut().find(|(i, _)| *i == h.index) {
            Some((_, c)) => *c = (*c).max(cycles),
            None => fixes.push((h.index, cycles)),
        }
    }
    fixes.sort_unstable_by_key(|f| std::cmp::Reverse(f.0));
    let mut repaired = sched.clone();
    for (index, cycles) in fixes {
        repaired.insert_delay(index, cycles);
    }
    let e = encode(f, assign, &repaired, profile)?;
    match check(&name, &e)?.first() {
        None => Ok(e),
        Some(h) => Err(EmitError {
            message: format!("control codes rejected by the hazard checker after repair: {h}"),
            origin: origin(&repaired, h),
        }),
    }
}

/// The hazard checker's findings on encoded code.
fn check(sm: &str, e: &Encoded) -> Result<Vec<hazard::Hazard>, EmitError> {
    hazard::check(sm, &sass::words(&e.code)).map_err(|m| EmitError {
        message: format!("hazard checker: {m}"),
        origin: None,
    })
}

/// A kernel ready for the cubin.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KernelCode {
    pub name: String,
    pub encoded: Encoded,
    pub params: Vec<(u32, u32)>,
    pub registers: u32,
    pub max_threads: Option<[u32; 3]>,
    pub reqntid: Option<[u32; 3]>,
    /// Bytes of static shared memory (`.nv.shared.<kernel>`).
    pub shared_size: u32,
    /// Bytes of the per-thread stack frame.
    pub frame_size: u32,
    pub num_barriers: u8,
    /// The kernel reads `%reserved_smem_offset_*` (EIATTR_RESERVED_SMEM_USED).
    pub reserved_smem_used: bool,
    /// sm_90: the reserved-smem link-time symbols its code resolves (see
    /// [`cubin::builder::ReservedSymbol`]).
    pub reserved_smem_resolved: Vec<cubin::builder::ReservedSymbol>,
    /// The system functions it calls (`EIATTR_EXTERNS`).
    pub system_calls: Vec<String>,
    /// Texture references it fetches through, with their constant-bank word offsets.
    pub texture_slots: Vec<(String, u32)>,
    /// Line-table rows (`cubin::builder::Kernel::source_lines`, `ptx_lines`); empty without
    /// line tables.
    pub source_lines: Vec<cubin::lines::Row>,
    pub ptx_lines: Vec<cubin::lines::Row>,
}

/// Module-level symbols that are not variables or kernels.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModuleSymbols {
    /// System functions the module declares (`vprintf`, ...): undefined function symbols,
    /// with address-table slots after the globals'.
    pub system_functions: Vec<String>,
    /// Texture references (`.global .texref`): undefined texture symbols.
    pub texrefs: Vec<String>,
}

/// The target a cubin is marked with: the SM number in the ELF header and, for `sm_XXa`,
/// the `.nv.compat` record that cuobjdump shows as `sm=90a` for an arch-specific (`a`)
/// target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CubinTarget {
    pub sm: Sm,
}

/// [`build_cubin`] for an explicit [`CubinTarget`].
pub fn build_cubin_for(
    target: CubinTarget,
    kernels: &[KernelCode],
    globals: &[cubin::builder::Global],
    constants: &[cubin::builder::Constant],
    symbols: &ModuleSymbols,
    line_tables: Option<cubin::builder::LineTables>,
) -> Result<Vec<u8>, String> {
    let system_functions = &symbols.system_functions;
    let sm = target.sm.number;
    let accelerated = target.sm.variant == SmVariant::ArchSpecific;
    let mut b = cubin::builder::Builder::new(u32::from(sm));
    b.accelerated = accelerated;
    b.globals = globals.to_vec();
    // Every global's address, in declaration order, then the system functions' (the slots
    // `lower` reads).
    b.address_table = globals.iter().map(|g| g.name.clone()).collect();
    b.address_table.extend(system_functions.iter().cloned());
    b.extern_functions = system_functions.to_vec();
    b.constants = constants.to_vec();
    b.texrefs = symbols.texrefs.clone();
    let suffix = if accelerated { "a" } else { "" };
    b.command_line = format!("kiln build --arch sm_{sm}{suffix}");
    for k in kernels {
        b.kernels.push(cubin::builder::Kernel {
            name: k.name.clone(),
            code: k.encoded.code.clone(),
            params: k
                .params
                .iter()
                .map(|(size, align)| cubin::builder::Param {
                    size: *size,
                    align: *align,
                })
                .collect(),
            registers: k.registers,
            exit_offsets: k.encoded.exit_offsets.clone(),
            s2rctaid_offsets: k.encoded.s2rctaid_offsets.clone(),
            max_threads: k.max_threads,
            reqntid: k.reqntid,
            shared_size: u64::from(k.shared_size),
            num_barriers: k.num_barriers,
            frame_size: k.frame_size,
            reserved_smem_used: k.reserved_smem_used,
            reserved_smem_resolved: k.reserved_smem_resolved.clone(),
            traps: k.encoded.traps,
            externs: k.system_calls.clone(),
            syscall_offsets: k.encoded.syscall_offsets.clone(),
            texture_slots: k.texture_slots.clone(),
            source_lines: k.source_lines.clone(),
            ptx_lines: k.ptx_lines.clone(),
            ..cubin::builder::Kernel::default()
        });
    }
    b.line_tables = line_tables;
    let c = b.build().map_err(|e| e.to_string())?;
    Ok(cubin::write(&c))
}
