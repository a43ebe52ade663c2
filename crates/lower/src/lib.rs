//! PTX → machine IR for one kernel (instruction selection, v1 subset).
//!
//! Input is one `.entry` as a syntax tree (the db's per-function trivia-free tree); output is
//! an [`ir::Func`] whose instructions are SASS forms ptxas itself emits for the same PTX on
//! sm_80 / sm_90 (checked against `ptxas` + `nvdisasm`, see `docs/arch/codegen.md`).
//!
//! Fail closed: every PTX construct outside the subset is a [`LowerError`] whose message
//! starts with `unsupported: ` and whose range is the offending node's range in the tree
//! passed in. Nothing is ever silently dropped.
//!
//! The subset: `.reg` declarations of `.pred`, 32-bit and 64-bit integer/bit types and `.f32`;
//! kernel parameters of any size read with `ld.param` (constant bank 0); `%tid`, `%ctaid`,
//! `%ntid`, `%nctaid`, `%laneid`; `mov`, `add`, `sub`, `mul.lo/.hi/.wide`, `mad.lo/.wide`,
//! `and/or/xor/not`, `shl/shr` (32-bit; 64-bit by a constant below 32), `setp` (32-bit integer
//! and f32, no combining predicate), `selp`, `min/max`, `neg/abs` of f32, f32
//! `add/sub/mul/fma/mad.rn`, `cvt` between 32/64-bit integers and `.rn` int→f32 / `.rzi`
//! f32→int, `cvta(.to).global`, `ld/st.global` (32/64 bits, `.nc`), `bra`, `ret`/`exit`;
//! `call` of device functions, inlined (`call.rs`). (The full list: `docs/arch/codegen.md`.)

#![forbid(unsafe_code)]

mod atom;
mod bitfield;
mod bits;
mod call;
mod cvt_table;
mod cvta;
mod fence;
mod fmath;
mod funnel;
mod half;
mod local;
mod modvar;
mod param;
mod param_ptr;
mod rsmem;
mod seq;
mod set;
mod small;
mod syscall;
mod testp;
mod texture;
mod warp;

pub use call::{Functions, direct_callees};
pub use rsmem::ReservedSmemUse;

use ir::{Block, Class, Func, Guard, Inst, Operand, Reg, VReg};
use rustc_hash::FxHashMap;
use syntax::ast::{self, AstNode, DeclLike, LiteralValue};
use syntax::{SyntaxNode, TextRange};
use target::{DriverWords, Forms, Profile};

/// Why a kernel could not be lowered: an unsupported feature or malformed input, with the
/// range (in the tree given to [`lower_kernel`]) of the construct responsible.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LowerError {
    pub message: String,
    pub range: TextRange,
    /// The device function whose tree `range` lies in, when the construct is in an inlined
    /// callee (`call.rs`); `None`: the kernel's tree.
    pub function: Option<String>,
}

/// The SM-dependent choices lowering makes: the SM's profile (parameter base, driver words,
/// shared-memory layout) and ptxas's instruction forms for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LowerTarget {
    pub profile: &'static Profile,
    /// ptxas's instruction forms for the SM (`profile.codegen`).
    pub forms: &'static Forms,
    /// The driver's words in bank 0 (`profile.driver`).
    pub driver: &'static DriverWords,
    /// Contract `mul` + `add`/`sub` into fused multiply-adds as ptxas does (`--fmad=true`,
    /// its default; `hir::contract`).
    pub fmad: bool,
}

impl LowerTarget {
    /// The target for an SM with code generation; `None` for the others.
    pub fn new(profile: &'static Profile, fmad: bool) -> Option<LowerTarget> {
        Some(LowerTarget {
            profile,
            forms: profile.codegen.as_ref()?,
            driver: profile.driver.as_ref()?,
            fmad,
        })
    }

    /// The target for `sm_<number>`. Panics unless kiln generates code for it (for tests).
    pub fn for_sm(number: u32, fmad: bool) -> LowerTarget {
        Profile::of(number)
            .and_then(|p| LowerTarget::new(p, fmad))
            .unwrap_or_else(|| panic!("sm_{number} has no code generation"))
    }

    /// Offset of the first kernel parameter in constant bank 0.
    fn param_base(self) -> u32 {
        self.profile.param_base
    }
}

/// A kernel parameter as laid out in the parameter block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ParamLayout {
    pub offset: u32,
    pub size: u32,
    pub align: u32,
}

/// A lowered kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lowered {
    pub func: Func,
    pub params: Vec<ParamLayout>,
    /// `.maxntid` / `.reqntid` of the kernel header.
    pub max_threads: Option<[u32; 3]>,
    pub reqntid: Option<[u32; 3]>,
    /// `.maxnreg`: the kernel's register budget.
    pub max_registers: Option<u32>,
    /// Bytes of static shared memory.
    pub shared_size: u32,
    /// Bytes of the per-thread stack frame (`.local` variables).
    pub frame_size: u32,
    /// Named barriers used (`bar.sync 0` only: 0 or 1).
    pub num_barriers: u8,
    /// `%reserved_smem_offset_*` reads (`EIATTR_RESERVED_SMEM_USED`, sm_90 symbols).
    pub reserved_smem: ReservedSmemUse,
    /// The system functions the kernel calls (`EIATTR_EXTERNS`), in order of first call.
    pub system_calls: Vec<String>,
    /// Texture references the kernel fetches through and the byte offsets of their words in
    /// constant bank 0 (after the parameters; `texture.rs`).
    pub texture_slots: Vec<(String, u32)>,
}

/// The stack-pointer register ptxas initializes in every kernel (`R1 = c[0x0][0x28]`).
pub const STACK_POINTER: u8 = 1;
/// The uniform pair holding the global memory descriptor.
pub const GLOBAL_DESC_UR: u8 = 4;
/// sm_90: the uniform registers holding the shared window base (and the CTA id in the
/// cluster it is formed from).
const SHARED_BASE_UR: u8 = 6;
/// Constant-bank offset of the per-thread stack top ptxas loads into R1.
const STACK_TOP_CBANK: u32 = 0x28;

fn unsupported(node: &SyntaxNode, what: impl std::fmt::Display) -> LowerError {
    LowerError {
        message: format!("unsupported: {what}"),
        range: node.text_range(),
        function: None,
    }
}

fn malformed(node: &SyntaxNode, what: impl std::fmt::Display) -> LowerError {
    LowerError {
        message: what.to_string(),
        range: node.text_range(),
        function: None,
    }
}

/// The state space of a load or store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MemSpace {
    Global,
    Shared,
    /// The thread's stack frame (`LDL`/`STL`, 32-bit addresses like shared memory).
    Local,
    /// No space: a generic address (`LD.E`/`ST.E`).
    Generic,
}

/// PTX scalar types the v1 subset handles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ty {
    B32,
    U32,
    S32,
    F32,
    B64,
    U64,
    S64,
    F64,
    Pred,
    /// 16-bit integers (`small.rs`: the low half of a 32-bit register).
    B16,
    U16,
    S16,
}

impl Ty {
    fn parse(s: &str) -> Option<Ty> {
        Some(match s {
            ".b32" => Ty::B32,
            ".u32" => Ty::U32,
            ".s32" => Ty::S32,
            ".f32" => Ty::F32,
            ".b64" => Ty::B64,
            ".u64" => Ty::U64,
            ".s64" => Ty::S64,
            ".f64" => Ty::F64,
            ".pred" => Ty::Pred,
            ".b16" => Ty::B16,
            ".u16" => Ty::U16,
            ".s16" => Ty::S16,
            _ => return None,
        })
    }
    fn words(self) -> u8 {
        match self {
            Ty::B64 | Ty::U64 | Ty::S64 | Ty::F64 => 2,
            _ => 1,
        }
    }
    fn signed(self) -> bool {
        matches!(self, Ty::S32 | Ty::S64 | Ty::S16)
    }
}

/// A PTX source operand after name resolution.
#[derive(Clone, Copy, Debug)]
enum Src {
    Reg(VReg, u8),
    Imm(u64),
    /// A special register: the S2R name or a constant-bank offset.
    Special(Sreg),
    /// The address of a shared variable: its offset in the kernel's shared block.
    Shared(u32),
    /// The address of a `.local` variable: its offset in the stack frame.
    Local(u32),
    /// The address of a module `.global` variable: its slot in the address table.
    Global(u32),
    /// The address of a module `.const` variable: its offset in constant bank 3.
    Const(u32),
}

#[derive(Clone, Copy, Debug)]
enum Sreg {
    S2r(&'static str),
    Cbank(u32),
    /// `%clock` (32-bit) / `%clock64`: `CS2R.32 R, SR_CLOCKLO` / `CS2R R, SR_CLOCKLO` (a
    /// register pair), as ptxas reads them; with `timer`, `%globaltimer_lo` /
    /// `%globaltimer` from `SR_GLOBALTIMERLO` the same ways.
    Clock {
        wide: bool,
        timer: bool,
    },
    /// `%reserved_smem_offset_*` (`rsmem.rs`).
    Reserved(rsmem::ReservedReg),
}

/// A declaration to undo at the end of a `{ }` block: the name and what it meant before (a
/// register, a register of an unsupported type, a `.param` variable).
struct ScopeUndo {
    name: String,
    reg: Option<(VReg, Ty)>,
    unsupported: Option<String>,
    param: Option<usize>,
}

struct Cx {
    target: LowerTarget,
    /// The `add`/`sub`s of the function being lowered that ptxas contracts, and their `mul`s
    /// by range (`hir::contract`; empty without `fmad`). Swapped with an inlined callee's.
    contractions: hir::contract::Contractions,
    contracted_muls: FxHashMap<TextRange, ast::Instruction>,
    f: Func,
    cur: Block,
    regs: FxHashMap<String, (VReg, Ty)>,
    params: FxHashMap<String, (u32, u32)>,
    labels: FxHashMap<String, Block>,
    /// The range of the PTX instruction being lowered (recorded on every IR instruction).
    origin: Option<(u32, u32)>,
    /// Function-scope shared variables: name → offset in the static shared block.
    shared: FxHashMap<String, u32>,
    shared_size: u32,
    /// Function-scope `.local` variables: offsets in the thread's stack frame (`local.rs`).
    locals: FxHashMap<String, u32>,
    frame_size: u32,
    frame_align: u32,
    /// An acquire load was just emitted: `CCTL.IVALL` follows it ([`Cx::finish_acquire`]).
    pending_acquire: bool,
    /// Module-scope shared names on sm_90, refused where used.
    needs_shared_base: bool,
    uses_barrier: bool,
    /// `%reserved_smem_offset_*` reads (`rsmem.rs`).
    reserved_smem: ReservedSmemUse,
    /// Declared registers of types outside the subset (an error where used).
    unsupported_regs: FxHashMap<String, String>,
    /// Declarations to undo when the `{ }` block they are in ends: (name, previous register,
    /// previous unsupported type).
    scope_undo: Vec<ScopeUndo>,
    guard: Option<Guard>,
    needs_desc: bool,
    /// The `WARPSYNC`s placed before warp collectives (block, first index, instructions),
    /// removed when the
    /// kernel cannot diverge (`warp.rs`).
    collective_syncs: Vec<(Block, usize, usize)>,
    /// Registers that hold one integer constant in the whole kernel (`warp.rs`).
    constants: FxHashMap<String, u64>,
    /// Module `.global` variables: slot in the address table (`modvar.rs`).
    globals: FxHashMap<String, u32>,
    /// System functions (`ir::abi::SYSTEM_FUNCTIONS`) declared in the module: their slot in
    /// the address table (after the `.global` variables).
    system_slots: FxHashMap<String, u32>,
    /// The blocks that start after a system call (`syscall.rs`).
    after_system_calls: Vec<Block>,
    /// The system functions the kernel calls, in order of first call.
    system_called: Vec<String>,
    /// Module `.const` variables: offset in constant bank 3 (`modvar.rs`).
    consts: FxHashMap<String, u32>,
    /// The module's device functions, for `call` (`call.rs`).
    functions: Functions,
    /// `.param` variables in scope (a call's argument and return slots, an inlined device
    /// function's own parameters): name → index in `param_data` (`call.rs`).
    param_vars: FxHashMap<String, usize>,
    param_data: Vec<call::ParamVar>,
    /// Kernel-body registers holding a kernel parameter's address, never materialized:
    /// register → (parameter, offset) (`param_ptr.rs`).
    param_ptrs: FxHashMap<String, (String, i64)>,
    /// Module-scope shared variables: the only shared names an inlined function sees.
    module_shared: FxHashMap<String, u32>,
    /// The device functions being inlined, outermost first (empty: the kernel's own body).
    inline_stack: Vec<String>,
    /// The range of the outermost `call` being inlined: the origin recorded on every IR
    /// instruction of an inlined body (origins are ranges in the kernel's tree).
    inline_site: Option<(u32, u32)>,
    /// Inside an inlined body: the block a `ret` branches to.
    ret_target: Option<Block>,
    /// The empty block started after the latest `ret` of an inlined body.
    after_ret: Option<Block>,
    /// IR instructions emitted so far (inlining is bounded by it).
    emitted: usize,
    /// Kernel-body registers loaded from a whole 64-bit kernel parameter: register →
    /// parameter (texture objects, `texture.rs`).
    texture_params: FxHashMap<String, String>,
    /// The module's texture references.
    texrefs: rustc_hash::FxHashSet<String>,
    /// Texture references fetched through, with their word's offset in constant bank 0.
    texture_slots: Vec<(String, u32)>,
    /// Bytes of the kernel's parameters (texture-reference words follow them).
    param_end: u32,
}

/// Module-scope variables a kernel may refer to.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ModuleVars {
    /// `.shared` variables with storage: (name, alignment, size in bytes).
    pub shared_static: Vec<(String, u32, u32)>,
    /// `.extern .shared` arrays (dynamic shared memory): (name, alignment).
    pub shared_extern: Vec<(String, u32)>,
    /// `.global` variables: their slot in the module's address table (`.nv.constant4`, 8 bytes
    /// per slot) is their index here.
    pub globals: Vec<String>,
    /// `.const` variables: (name, offset in constant bank 3).
    pub consts: Vec<(String, u32)>,
    /// System functions (`vprintf`, `__assertfail`) declared in the module, in declaration
    /// order: their addresses follow the globals' in the address table.
    pub system_functions: Vec<String>,
    /// Texture references (`.global .texref`, `.tex`), in declaration order.
    pub texrefs: Vec<String>,
}

/// Lowers one kernel. `function` is the `FUNCTION` node (trivia-free tree from the db);
/// `functions` holds the device functions it calls, directly or not (`call.rs` inlines them).
pub fn lower_kernel(
    function: &SyntaxNode,
    target: LowerTarget,
    module: &ModuleVars,
    functions: &Functions,
) -> Result<Lowered, LowerError> {
    let f = ast::Function::cast(function.clone())
        .ok_or_else(|| malformed(function, "not a function"))?;
    let name = f
        .name()
        .map(|t| t.text().to_string())
        .ok_or_else(|| malformed(function, "function without a name"))?;
    if !f.is_entry() {
        return Err(unsupported(function, "`.func` device functions"));
    }
    let body = f
        .body()
        .ok_or_else(|| unsupported(function, "kernel declarations without a body"))?;
    let mut func = Func::new(name);
    let entry = func.new_block();
    func.order.push(entry);
    let defs = warp::single_definitions(&body);
    let mut cx = Cx {
        target,
        f: func,
        cur: entry,
        regs: FxHashMap::default(),
        params: FxHashMap::default(),
        labels: FxHashMap::default(),
        unsupported_regs: FxHashMap::default(),
        scope_undo: Vec::new(),
        shared: FxHashMap::default(),
        shared_size: 0,
        locals: FxHashMap::default(),
        frame_size: 0,
        frame_align: 1,
        pending_acquire: false,
        needs_shared_base: false,
        uses_barrier: false,
        reserved_smem: ReservedSmemUse::default(),
        origin: None,
        guard: None,
        needs_desc: false,
        collective_syncs: Vec::new(),
        constants: warp::single_constant_registers(&defs),
        contractions: Default::default(),
        contracted_muls: FxHashMap::default(),
        texture_params: texture::parameter_registers(&defs),
        texrefs: module.texrefs.iter().cloned().collect(),
        texture_slots: Vec::new(),
        param_end: 0,
        globals: module
            .globals
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i as u32))
            .collect(),
        consts: module.consts.iter().cloned().collect(),
        system_slots: module
            .system_functions
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), (module.globals.len() + i) as u32))
            .collect(),
        after_system_calls: Vec::new(),
        system_called: Vec::new(),
        functions: functions.clone(),
        param_vars: FxHashMap::default(),
        param_ptrs: FxHashMap::default(),
        param_data: Vec::new(),
        module_shared: FxHashMap::default(),
        inline_stack: Vec::new(),
        inline_site: None,
        ret_target: None,
        after_ret: None,
        emitted: 0,
    };
    // Parameters.
    let mut params = Vec::new();
    let mut cursor = 0u32;
    for p in f.params() {
        let pname = p
            .name()
            .map(|t| t.text().to_string())
            .ok_or_else(|| malformed(p.syntax(), "parameter without a name"))?;
        let ty = p
            .ty()
            .ok_or_else(|| malformed(p.syntax(), "parameter without a type"))?;
        if p.state_space().is_some_and(|s| s.text() != ".param") {
            return Err(unsupported(p.syntax(), "non-.param kernel parameters"));
        }
        let elem = match ty.text() {
            ".b8" | ".u8" | ".s8" => 1,
            ".b16" | ".u16" | ".s16" | ".f16" | ".bf16" => 2,
            ".b32" | ".u32" | ".s32" | ".f32" | ".f16x2" | ".bf16x2" => 4,
            ".b64" | ".u64" | ".s64" | ".f64" => 8,
            other => return Err(unsupported(p.syntax(), format!("parameter type {other}"))),
        };
        let mut count = 1u32;
        for d in p.declarators() {
            for dim in d.array_dims() {
                let n = dim
                    .size()
                    .and_then(|e| e.as_int())
                    .ok_or_else(|| unsupported(p.syntax(), "parameter arrays of unknown size"))?;
                count = count.saturating_mul(n as u32);
            }
        }
        let vec = p.vector().unwrap_or(1);
        let size = elem * count * vec;
        let align = p.align().unwrap_or(elem * vec).max(1);
        let offset = cursor.div_ceil(align) * align;
        cursor = offset + size;
        cx.params.insert(pname, (offset, size));
        params.push(ParamLayout {
            offset,
            size,
            align,
        });
    }
    cx.param_end = cursor;
    cx.param_ptrs = param_ptr::param_pointers(&body, &cx.params);
    let mut max_threads = None;
    let mut reqntid = None;
    let mut max_registers = None;
    for d in f.perf_directives() {
        let dname = d.name().map(|t| t.text().to_string()).unwrap_or_default();
        let args: Vec<u32> = d
            .int_args()
            .into_iter()
            .map(|a| a.unwrap_or(1) as u32)
            .collect();
        let dims = [
            args.first().copied().unwrap_or(1),
            args.get(1).copied().unwrap_or(1),
            args.get(2).copied().unwrap_or(1),
        ];
        match dname.as_str() {
            ".maxntid" => max_threads = Some(dims),
            ".reqntid" => reqntid = Some(dims),
            // Occupancy hints: they bound ptxas's register choice, not the semantics.
            ".noreturn" | ".minnctapersm" => {}
            ".maxnreg" => max_registers = args.first().copied(),
            other => {
                return Err(unsupported(d.syntax(), format!("kernel directive {other}")));
            }
        }
    }
    // Module-scope static shared variables come first in every kernel's block.
    for (n, align, size) in &module.shared_static {
        let at = cx.shared_size.div_ceil((*align).max(1)) * (*align).max(1);
        cx.shared_size = at + size;
        cx.shared.insert(n.clone(), at);
    }
    // Prologue: the stack pointer, as ptxas writes it in every kernel.
    let sp = Reg::Phys {
        class: Class::R,
        index: STACK_POINTER,
        width: 1,
    };
    cx.const_load(Operand::r(sp), STACK_TOP_CBANK, 1);
    if target.fmad {
        (cx.contractions, cx.contracted_muls) = contraction_maps(&body);
    }
    // Labels are visible in the whole body: create their blocks first.
    collect_labels(&body, &mut cx)?;
    // Dynamic (`.extern .shared`) arrays all start where the static block ends, aligned;
    // the static block is padded to that start so the driver places the dynamic region
    // exactly there.
    if !module.shared_extern.is_empty() {
        let align = module
            .shared_extern
            .iter()
            .map(|(_, a)| *a)
            .max()
            .unwrap_or(1)
            .max(16);
        let base = cx.shared_size.div_ceil(align) * align;
        cx.shared_size = base;
        for (n, _) in &module.shared_extern {
            cx.shared.insert(n.clone(), base);
        }
    }
    cx.module_shared = module
        .shared_static
        .iter()
        .map(|(n, ..)| n)
        .chain(module.shared_extern.iter().map(|(n, _)| n))
        .filter_map(|n| Some((n.clone(), *cx.shared.get(n)?)))
        .collect();
    cx.block(&body)?;
    cx.drop_collective_syncs();
    // The frame's size is known only now (inlined functions add their `.local` variables);
    // placed after `drop_collective_syncs`, which works on recorded instruction positions.
    cx.open_frame(entry);
    // The empty block opened after a final `ret` is not a label: drop it.
    while cx.f.order.len() > 1 {
        let last = *cx.f.order.last().expect("blocks");
        if cx.f.blocks[last].insts.is_empty() && !cx.labels.values().any(|b| *b == last) {
            cx.f.order.pop();
        } else {
            break;
        }
    }
    // A body that falls off its end exits.
    let last = *cx.f.order.last().expect("entry block");
    let ends = cx.f.blocks[last]
        .insts
        .last()
        .is_some_and(|i| i.is_terminator() && i.guard.is_none());
    if !ends {
        cx.push(Inst::new("EXIT", vec![], vec![]));
    }
    // The fixed registers the kernel sets up in its first block and keeps: set again after
    // every system call, which may change them (`syscall.rs`).
    let mut prologue: Vec<Inst> = Vec::new();
    if cx.needs_desc {
        let desc = cx.target.driver.global_desc;
        prologue.push(Inst::new(
            "ULDC.64",
            vec![
                Operand::r(desc_reg()),
                Operand::Const {
                    bank: 0,
                    offset: desc,
                },
            ],
            vec![0],
        ));
    }
    if cx.needs_shared_base {
        // ptxas links the 0x400 through `.nv.reservedSmem.cap` (`rsmem.rs`).
        cx.reserved_smem.cap = true;
        let ur = |index| Reg::Phys {
            class: Class::UR,
            index,
            width: 1,
        };
        let (base, cta) = (ur(SHARED_BASE_UR), ur(SHARED_BASE_UR + 1));
        prologue.extend([
            Inst::new(
                "S2UR",
                vec![Operand::r(cta), Operand::Special("SR_CgaCtaId")],
                vec![0],
            ),
            Inst::new(
                "UMOV",
                vec![
                    Operand::r(base),
                    Operand::Imm(i64::from(target::RESERVED_SHARED_BYTES)),
                ],
                vec![0],
            ),
            Inst::new(
                "ULEA",
                vec![
                    Operand::r(base),
                    Operand::r(cta),
                    Operand::r(base),
                    Operand::Hex(0x18),
                ],
                vec![0],
            ),
        ]);
    }
    for (k, i) in prologue.iter().enumerate() {
        cx.f.blocks[entry].insts.insert(1 + k, i.clone());
    }
    for &b in &cx.after_system_calls {
        for (k, i) in prologue.iter().enumerate() {
            cx.f.blocks[b].insts.insert(k, i.clone());
        }
    }
    Ok(Lowered {
        func: cx.f,
        params,
        max_threads,
        reqntid,
        max_registers,
        // sm_90: ptxas reserves the first 1 KiB of the CTA's shared memory; the block
        // (`.nv.shared.<kernel>`) covers it when the kernel uses shared memory.
        shared_size: if !cx.shared.is_empty() {
            target.profile.reserved_shared_first() + cx.shared_size
        } else {
            cx.shared_size
        },
        num_barriers: u8::from(cx.uses_barrier),
        frame_size: cx.frame_size,
        reserved_smem: cx.reserved_smem,
        system_calls: cx.system_called,
        texture_slots: cx.texture_slots,
    })
}

fn desc_reg() -> Reg {
    Reg::Phys {
        class: Class::UR,
        index: GLOBAL_DESC_UR,
        width: 2,
    }
}

/// The contracted `add`/`sub`s of a body (`hir::contract`) and the `mul`s they read, by range.
fn contraction_maps(
    body: &ast::Block,
) -> (
    hir::contract::Contractions,
    FxHashMap<TextRange, ast::Instruction>,
) {
    let c = hir::contract::contractions(body);
    let muls: rustc_hash::FxHashSet<_> = c.values().map(|x| x.mul).collect();
    let by_range = body
        .syntax()
        .descendants()
        .filter_map(ast::Instruction::cast)
        .filter(|i| muls.contains(&i.syntax().text_range()))
        .map(|i| (i.syntax().text_range(), i))
        .collect();
    (c, by_range)
}

/// Creates a block per label and places the function-scope `.shared` variables (so that the
/// dynamic shared region's start is known before the body is lowered).
fn collect_labels(b: &ast::Block, cx: &mut Cx) -> Result<(), LowerError> {
    for st in b.statements() {
        match st {
            ast::Statement::Label(l) => {
                if let Some(n) = l.name() {
                    let blk = cx.f.new_block();
                    cx.labels.insert(n.text().to_string(), blk);
                }
            }
            ast::Statement::Block(inner) => collect_labels(&inner, cx)?,
            ast::Statement::VarDecl(v)
                if v.state_space().is_some_and(|t| t.text() == ".shared") =>
            {
                if !cx.inline_stack.is_empty() {
                    // Per-CTA storage shared by every invocation: all inlined copies would
                    // have to agree on one place. Not needed by the corpus (one file).
                    return Err(unsupported(
                        v.syntax(),
                        ".shared variables declared in a device function",
                    ));
                }
                cx.shared_decl(&v)?;
            }
            ast::Statement::VarDecl(v) if v.state_space().is_some_and(|t| t.text() == ".local") => {
                cx.local_decl(&v)?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// The `.rn`-style rounding and `.ftz`/`.sat` modifiers of an f32 instruction as a SASS suffix.
fn float_suffix(
    node: &SyntaxNode,
    mods: &[String],
    allow_round: bool,
) -> Result<String, LowerError> {
    let mut s = String::new();
    let mut sat = false;
    for m in mods {
        match m.as_str() {
            ".rn" if allow_round => {}
            ".rz" if allow_round => s.push_str(".RZ"),
            ".rm" if allow_round => s.push_str(".RM"),
            ".rp" if allow_round => s.push_str(".RP"),
            ".ftz" => s.insert_str(0, ".FTZ"),
            // Clamps the result to [0, 1] (NaN to 0): ptxas 13.0.88's `FADD.FTZ.RZ.SAT`,
            // `FMUL.RP.SAT`, `FFMA.FTZ.SAT` (modifier order from nvdisasm).
            ".sat" if allow_round => sat = true,
            ".f32" | ".f64" => {}
            other => return Err(unsupported(node, format!("f32 modifier {other}"))),
        }
    }
    if sat {
        s.push_str(".SAT");
    }
    Ok(s)
}

impl Cx {
    fn push(&mut self, mut i: Inst) {
        if i.guard.is_none() {
            i.guard = self.guard;
        }
        i.origin = self.origin;
        self.emitted += 1;
        let b = self.cur;
        self.f.blocks[b].insts.push(i);
    }

    /// Starts a new block after a terminator (not reachable by fallthrough from a label).
    fn start_block(&mut self, b: Block) {
        self.f.order.push(b);
        self.cur = b;
    }

    fn tmp(&mut self, width: u8) -> VReg {
        self.f.new_vreg(Class::R, width, "")
    }

    fn ptmp(&mut self) -> VReg {
        self.f.new_vreg(Class::P, 1, "")
    }

    /// `dst = c[0x0][offset]` for `words` 32-bit words: MOV per word on sm_80, LDC(.64) on
    /// sm_90 (ptxas's forms; sm_90 has no constant operand on MOV).
    fn const_load(&mut self, dst: Operand, offset: u32, words: u8) {
        self.const_load_in(dst, 0, offset, words);
    }

    /// `dst` = `words` words of constant bank `bank` at `offset`: `LDC`/`LDC.64` on sm_90,
    /// one `MOV R, c[bank][o]` per word before (ptxas's forms).
    fn const_load_in(&mut self, dst: Operand, bank: u8, offset: u32, words: u8) {
        let Operand::Reg { reg, .. } = dst else {
            unreachable!("const_load into a register")
        };
        if self.target.forms.ldc {
            let op = if words == 2 { "LDC.64" } else { "LDC" };
            let src = if offset == 0 {
                // nvdisasm prints a zero offset of LDC as the RZ index.
                Operand::ConstIndexed {
                    bank,
                    index: Reg::Zero(Class::R),
                    offset: 0,
                }
            } else {
                Operand::Const { bank, offset }
            };
            self.push(Inst::new(op, vec![Operand::r(reg), src], vec![0]));
        } else {
            for w in 0..words {
                let part = sub(reg, w);
                self.push(Inst::new(
                    "MOV",
                    vec![
                        Operand::r(part),
                        Operand::Const {
                            bank,
                            offset: offset + 4 * u32::from(w),
                        },
                    ],
                    vec![0],
                ));
            }
        }
    }

    /// A `{ ... }` block: registers declared inside shadow outer ones until its end.
    fn block(&mut self, b: &ast::Block) -> Result<(), LowerError> {
        // Declarations inside shadow the outer ones until the block ends: undo them from the
        // log (cloning the maps would make nested blocks quadratic in large kernels).
        let mark = self.scope_undo.len();
        let r = self.block_statements(b);
        self.undo_scope(mark);
        r
    }

    /// Undoes the declarations logged since `mark`.
    fn undo_scope(&mut self, mark: usize) {
        while self.scope_undo.len() > mark {
            let u = self.scope_undo.pop().expect("undo entry");
            match u.reg {
                Some(v) => self.regs.insert(u.name.clone(), v),
                None => self.regs.remove(&u.name),
            };
            match u.unsupported {
                Some(t) => self.unsupported_regs.insert(u.name.clone(), t),
                None => self.unsupported_regs.remove(&u.name),
            };
            match u.param {
                Some(p) => self.param_vars.insert(u.name, p),
                None => self.param_vars.remove(&u.name),
            };
        }
    }

    /// Logs what `name` meant before a declaration in the current block and forgets it.
    fn shadow(&mut self, name: &str) {
        self.scope_undo.push(ScopeUndo {
            name: name.to_string(),
            reg: self.regs.remove(name),
            unsupported: self.unsupported_regs.remove(name),
            param: self.param_vars.remove(name),
        });
    }

    fn declare_reg(&mut self, name: String, v: (VReg, Ty)) {
        self.shadow(&name);
        self.regs.insert(name, v);
    }

    fn declare_unsupported(&mut self, name: String, ty: String) {
        self.shadow(&name);
        self.unsupported_regs.insert(name, ty);
    }

    /// Declares a `.param` variable (index into `param_data`) in the current block.
    fn declare_param(&mut self, name: String, var: usize) {
        self.shadow(&name);
        self.param_vars.insert(name, var);
    }

    fn block_statements(&mut self, b: &ast::Block) -> Result<(), LowerError> {
        for st in b.statements() {
            match st {
                ast::Statement::Label(l) => {
                    let name = l.name().map(|t| t.text().to_string()).unwrap_or_default();
                    let Some(&blk) = self.labels.get(&name) else {
                        return Err(malformed(l.syntax(), "label without a name"));
                    };
                    if self.f.order.contains(&blk) {
                        return Err(malformed(
                            l.syntax(),
                            format!("label `{name}` defined twice"),
                        ));
                    }
                    self.start_block(blk);
                }
                ast::Statement::Block(inner) => self.block(&inner)?,
                ast::Statement::VarDecl(v) => self.var_decl(&v)?,
                ast::Statement::Instruction(i) => self.instruction(&i)?,
                ast::Statement::Directive(d) => {
                    let n = d.name().map(|t| t.text().to_string()).unwrap_or_default();
                    // `.callprototype` only declares the signature of indirect calls
                    // (refused at the `call`).
                    if n != ".loc" && n != ".pragma" && n != ".callprototype" {
                        return Err(unsupported(d.syntax(), format!("directive {n} in a body")));
                    }
                }
                ast::Statement::FileDirective(_) => {}
            }
        }
        Ok(())
    }

    fn var_decl(&mut self, v: &ast::VarDecl) -> Result<(), LowerError> {
        let space = v
            .state_space()
            .map(|t| t.text().to_string())
            .unwrap_or_default();
        if space == ".shared" || space == ".local" {
            // Placed before the body is lowered (`collect_labels`).
            return Ok(());
        }
        if space == ".param" {
            return self.param_decl(v);
        }
        if space != ".reg" {
            return Err(unsupported(v.syntax(), format!("{space} variables")));
        }
        if v.vector().is_some() {
            return Err(unsupported(v.syntax(), "vector registers"));
        }
        let tyt = v.ty().map(|t| t.text().to_string()).unwrap_or_default();
        // An `.f16`/`.bf16` register holds its value like a `.b16` one (`small.rs`: the low
        // half of an R register): instructions type their operands, not the registers.
        let parsed = match tyt.as_str() {
            ".f16" | ".bf16" => Some(Ty::B16),
            t => Ty::parse(t),
        };
        let Some(ty) = parsed else {
            // Declaring registers of an unsupported type is harmless; using one is not.
            for d in v.declarators() {
                let Some(n) = d.name() else { continue };
                let n = n.text().to_string();
                match d.param_count() {
                    Some(k) => {
                        for i in 0..k {
                            self.declare_unsupported(format!("{n}{i}"), tyt.clone());
                        }
                    }
                    None => {
                        self.declare_unsupported(n, tyt.clone());
                    }
                }
            }
            return Ok(());
        };
        let (class, width) = if ty == Ty::Pred {
            (Class::P, 1)
        } else {
            (Class::R, ty.words())
        };
        for d in v.declarators() {
            let Some(n) = d.name() else { continue };
            let n = n.text().to_string();
            if d.initializer().is_some() || d.array_dims().next().is_some() {
                return Err(unsupported(d.syntax(), "register arrays and initializers"));
            }
            match d.param_count() {
                Some(k) => {
                    for i in 0..k {
                        let name = format!("{n}{i}");
                        let r = self.f.new_vreg(class, width, name.clone());
                        self.declare_reg(name, (r, ty));
                    }
                }
                None => {
                    let r = self.f.new_vreg(class, width, n.clone());
                    self.declare_reg(n, (r, ty));
                }
            }
        }
        Ok(())
    }

    /// A function-scope `.shared` variable: placed in the kernel's static shared block.
    fn shared_decl(&mut self, v: &ast::VarDecl) -> Result<(), LowerError> {
        if !v.linkage().is_empty() {
            return Err(unsupported(v.syntax(), "extern or linked shared variables"));
        }
        let tyt = v.ty().map(|t| t.text().to_string()).unwrap_or_default();
        let elem: u32 = match tyt.as_str() {
            ".b8" | ".u8" | ".s8" => 1,
            ".b16" | ".u16" | ".s16" | ".f16" | ".bf16" => 2,
            ".b32" | ".u32" | ".s32" | ".f32" | ".f16x2" | ".bf16x2" => 4,
            ".b64" | ".u64" | ".s64" | ".f64" => 8,
            other => {
                return Err(unsupported(
                    v.syntax(),
                    format!("shared variables of type {other}"),
                ));
            }
        };
        let elem = elem * v.vector().unwrap_or(1);
        let align = v.align().unwrap_or(elem).max(1);
        for d in v.declarators() {
            let Some(n) = d.name() else { continue };
            if d.initializer().is_some() {
                return Err(unsupported(
                    d.syntax(),
                    "shared variables with initializers",
                ));
            }
            let mut count = 1u32;
            for dim in d.array_dims() {
                let k = dim
                    .size()
                    .and_then(|e| e.as_int())
                    .ok_or_else(|| unsupported(d.syntax(), "shared arrays of unknown size"))?;
                count = count
                    .checked_mul(k as u32)
                    .ok_or_else(|| unsupported(d.syntax(), "shared arrays this large"))?;
            }
            let at = self.shared_size.div_ceil(align) * align;
            self.shared_size = at
                .checked_add(elem * count)
                .filter(|e| *e <= 48 * 1024)
                .ok_or_else(|| {
                    unsupported(d.syntax(), "more than 48 KiB of static shared memory")
                })?;
            if self.shared.insert(n.text().to_string(), at).is_some() {
                return Err(unsupported(
                    d.syntax(),
                    "shared variables with a repeated name",
                ));
            }
        }
        Ok(())
    }

    /// Resolves a source operand.
    fn src(&self, o: &ast::Operand) -> Result<Src, LowerError> {
        match o {
            ast::Operand::Name(n) => {
                let name = n.name().map(|t| t.text().to_string()).unwrap_or_default();
                if let Some(ty) = self.unsupported_regs.get(&name) {
                    return Err(unsupported(n.syntax(), format!("{ty} registers")));
                }
                if self.param_vars.contains_key(&name) {
                    return Err(unsupported(
                        n.syntax(),
                        format!("the address of the .param variable `{name}`"),
                    ));
                }
                if let Some(&at) = self.shared.get(&name) {
                    // The variable's address in the shared window.
                    return Ok(Src::Shared(at));
                }
                if let Some(&at) = self.locals.get(&name) {
                    return Ok(Src::Local(at));
                }
                if let Some((r, ty)) = self.regs.get(&name) {
                    if n.components().next().is_some() {
                        return Err(unsupported(n.syntax(), "vector components"));
                    }
                    return Ok(Src::Reg(*r, ty.words()));
                }
                if let Some(&slot) = self.globals.get(&name) {
                    return Ok(Src::Global(slot));
                }
                if let Some(&at) = self.consts.get(&name) {
                    return Ok(Src::Const(at));
                }
                if name == "WARP_SZ" {
                    return Ok(Src::Imm(32));
                }
                let comp = n.components().next().map(|t| t.text().to_string());
                if comp.is_none()
                    && let Some(r) = rsmem::ReservedReg::from_name(&name)
                {
                    return Ok(Src::Special(Sreg::Reserved(r)));
                }
                let axis = |c: &Option<String>| match c.as_deref() {
                    Some(".x") => Some(0u32),
                    Some(".y") => Some(1),
                    Some(".z") => Some(2),
                    _ => None,
                };
                let s = match (name.as_str(), axis(&comp)) {
                    ("%tid", Some(a)) => {
                        Sreg::S2r(["SR_TID.X", "SR_TID.Y", "SR_TID.Z"][a as usize])
                    }
                    ("%ctaid", Some(a)) => {
                        Sreg::S2r(["SR_CTAID.X", "SR_CTAID.Y", "SR_CTAID.Z"][a as usize])
                    }
                    ("%ntid", Some(a)) => Sreg::Cbank(4 * a),
                    ("%nctaid", Some(a)) => Sreg::Cbank(0xc + 4 * a),
                    ("%laneid", None) => Sreg::S2r("SR_LANEID"),
                    ("%lanemask_eq", None) => Sreg::S2r("SR_EQMASK"),
                    ("%lanemask_lt", None) => Sreg::S2r("SR_LTMASK"),
                    ("%lanemask_le", None) => Sreg::S2r("SR_LEMASK"),
                    ("%lanemask_gt", None) => Sreg::S2r("SR_GTMASK"),
                    ("%lanemask_ge", None) => Sreg::S2r("SR_GEMASK"),
                    ("%clock", None) => Sreg::Clock {
                        wide: false,
                        timer: false,
                    },
                    ("%clock64", None) => Sreg::Clock {
                        wide: true,
                        timer: false,
                    },
                    ("%globaltimer_lo", None) => Sreg::Clock {
                        wide: false,
                        timer: true,
                    },
                    ("%globaltimer", None) => Sreg::Clock {
                        wide: true,
                        timer: true,
                    },
                    (e, None)
                        if let Some(k) = e
                            .strip_prefix("%envreg")
                            .and_then(|k| k.parse::<u32>().ok())
                            .filter(|k| *k < 32) =>
                    {
                        Sreg::Cbank(self.target.driver.envreg0 + 4 * k)
                    }
                    _ => {
                        return Err(unsupported(
                            n.syntax(),
                            format!("operand `{}`", n.syntax().text()),
                        ));
                    }
                };
                Ok(Src::Special(s))
            }
            _ => match o.as_int() {
                Some(v) => Ok(Src::Imm(v)),
                None => match o {
                    ast::Operand::Immediate(l) => match l.value() {
                        Some(LiteralValue::F32Bits(b)) => Ok(Src::Imm(u64::from(b))),
                        Some(LiteralValue::F64Bits(b)) => Ok(Src::Imm(b)),
                        _ => Err(unsupported(o.syntax(), "this literal form")),
                    },
                    _ => Err(unsupported(
                        o.syntax(),
                        format!("operand `{}`", o.syntax().text()),
                    )),
                },
            },
        }
    }

    /// A destination register of `words` words.
    fn dst(&self, o: &ast::Operand, words: u8) -> Result<Reg, LowerError> {
        match self.src(o)? {
            Src::Reg(r, w) if w == words => Ok(Reg::v(r, w)),
            Src::Reg(..) => Err(unsupported(o.syntax(), "operand of another width")),
            _ => Err(malformed(o.syntax(), "destination is not a register")),
        }
    }

    fn pred_dst(&self, o: &ast::Operand) -> Result<Reg, LowerError> {
        match self.src(o)? {
            Src::Reg(r, 1) if self.f.vregs[r].class == Class::P => Ok(Reg::v(r, 1)),
            _ => Err(unsupported(o.syntax(), "predicate destination form")),
        }
    }

    /// A source operand in registers (immediates and special registers are materialized).
    fn reg_src(&mut self, o: &ast::Operand, words: u8) -> Result<Reg, LowerError> {
        match self.src(o)? {
            Src::Reg(r, w) if w == words && self.f.vregs[r].class == Class::R => Ok(Reg::v(r, w)),
            Src::Reg(..) => Err(unsupported(o.syntax(), "operand of another width or class")),
            Src::Imm(v) => {
                let t = self.tmp(words);
                for w in 0..words {
                    let word = (v >> (32 * w)) as u32;
                    self.mov_imm(Reg::part(t, w), word);
                }
                Ok(Reg::v(t, words))
            }
            Src::Shared(at) => {
                let t = self.tmp(words);
                self.shared_addr(Reg::part(t, 0), at);
                if words == 2 {
                    self.mov_imm(Reg::part(t, 1), 0);
                }
                Ok(Reg::v(t, words))
            }
            Src::Local(at) => {
                let t = self.tmp(words);
                self.local_addr(Reg::part(t, 0), at);
                if words == 2 {
                    self.mov_imm(Reg::part(t, 1), 0);
                }
                Ok(Reg::v(t, words))
            }
            Src::Global(slot) => {
                if words != 2 {
                    return Err(unsupported(o.syntax(), "32-bit global addresses"));
                }
                Ok(Reg::v(self.global_addr(slot), 2))
            }
            Src::Const(at) => {
                let t = self.tmp(words);
                self.mov_imm(Reg::part(t, 0), at);
                if words == 2 {
                    self.mov_imm(Reg::part(t, 1), 0);
                }
                Ok(Reg::v(t, words))
            }
            Src::Special(s @ Sreg::Clock { wide: true, .. }) if words == 2 => {
                let t = self.tmp(2);
                self.special(Reg::v(t, 2), s);
                Ok(Reg::v(t, 2))
            }
            Src::Special(s) => {
                if words != 1 || matches!(s, Sreg::Clock { wide: true, .. }) {
                    return Err(unsupported(o.syntax(), "64-bit special registers"));
                }
                let t = self.tmp(1);
                self.special(Reg::v(t, 1), s);
                Ok(Reg::v(t, 1))
            }
        }
    }

    /// `dst` = the shared-window address of offset `at` of the kernel's shared block. sm_80:
    /// the offset itself. sm_90 (ptxas's form): the base `(SR_CgaCtaId << 24) + 0x400` kept
    /// in UR6 (computed once in the prologue) plus the offset.
    fn shared_addr(&mut self, dst: Reg, at: u32) {
        if !self.target.forms.clusters {
            self.mov_imm(dst, at);
            return;
        }
        self.needs_shared_base = true;
        let base = Operand::r(Reg::Phys {
            class: Class::UR,
            index: SHARED_BASE_UR,
            width: 1,
        });
        if at == 0 {
            self.push(Inst::new("MOV", vec![Operand::r(dst), base], vec![0]));
        } else {
            let t = Reg::v(self.tmp(1), 1);
            self.mov_imm(t, at);
            self.push(Inst::new(
                "IADD3",
                vec![Operand::r(dst), Operand::r(t), base, Operand::rz()],
                vec![0],
            ));
        }
    }

    fn mov_imm(&mut self, dst: Reg, v: u32) {
        let src = if v == 0 {
            Operand::rz()
        } else {
            Operand::Imm(i64::from(v))
        };
        self.push(Inst::new("MOV", vec![Operand::r(dst), src], vec![0]));
    }

    fn special(&mut self, dst: Reg, s: Sreg) {
        match s {
            Sreg::S2r(name) => self.push(Inst::new(
                "S2R",
                vec![Operand::r(dst), Operand::Special(name)],
                vec![0],
            )),
            Sreg::Cbank(off) => self.const_load(Operand::r(dst), off, 1),
            Sreg::Clock { wide, timer } => self.push(Inst::new(
                if wide { "CS2R" } else { "CS2R.32" },
                vec![
                    Operand::r(dst),
                    Operand::Special(if timer {
                        "SR_GLOBALTIMERLO"
                    } else {
                        "SR_CLOCKLO"
                    }),
                ],
                vec![0],
            )),
            Sreg::Reserved(r) => self.reserved_smem(dst, r),
        }
    }

    fn instruction(&mut self, i: &ast::Instruction) -> Result<(), LowerError> {
        let node = i.syntax();
        self.guard = match i.guard() {
            Some(g) => {
                let n = g
                    .predicate()
                    .and_then(|p| p.name())
                    .map(|t| t.text().to_string())
                    .unwrap_or_default();
                match self.regs.get(&n) {
                    Some((r, Ty::Pred)) => Some(Guard {
                        pred: Reg::v(*r, 1),
                        negated: g.is_negated(),
                    }),
                    _ => return Err(malformed(node, format!("guard `{n}` is not a predicate"))),
                }
            }
            None => None,
        };
        let r = node.text_range();
        self.origin = Some(
            self.inline_site
                .unwrap_or((r.start().into(), r.end().into())),
        );
        let opcode = i.opcode().map(|t| t.text().to_string()).unwrap_or_default();
        let mods: Vec<String> = i.modifiers().map(|t| t.text().to_string()).collect();
        let ops: Vec<ast::Operand> = i.operands().collect();
        let r = self.select(node, &opcode, &mods, &ops);
        self.guard = None;
        self.origin = None;
        r
    }

    /// The single type modifier of an instruction (the last type word).
    fn ty_of(node: &SyntaxNode, mods: &[String]) -> Result<Ty, LowerError> {
        let t = mods
            .iter()
            .rev()
            .find(|m| ast::TYPES.contains(&m.as_str()))
            .ok_or_else(|| malformed(node, "instruction without a type"))?;
        Ty::parse(t).ok_or_else(|| unsupported(node, format!("type {t}")))
    }

    fn need(node: &SyntaxNode, ops: &[ast::Operand], n: usize) -> Result<(), LowerError> {
        if ops.len() == n {
            Ok(())
        } else {
            Err(malformed(node, format!("expected {n} operands")))
        }
    }

    fn select(
        &mut self,
        node: &SyntaxNode,
        opcode: &str,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        let unsup = |what: &str| Err(unsupported(node, what));
        let has = |m: &str| mods.iter().any(|x| x == m);
        if matches!(opcode, "mov" | "add")
            && let Some(ast::Operand::Name(n)) = ops.first()
            && n.name()
                .is_some_and(|t| self.param_ptrs.contains_key(t.text()))
        {
            // A parameter's address, folded into the `ld.param`s that use it (`param_ptr.rs`).
            return Ok(());
        }
        if let Some(r) = self.half2_arith(node, opcode, mods, ops) {
            return r;
        }
        if opcode == "cvt"
            && ops.len() == 3
            && mods.len() == 3
            && has(".rn")
            && has(".f32")
            && (has(".f16x2") || has(".bf16x2"))
        {
            // `cvt.rn.{f16x2,bf16x2}.f32 d, a, b`: a's conversion in the high half, b's in
            // the low half; ptxas 13.0.88's `F2FP(.BF16)(.F32 on sm_90).PACK_AB d, a, b`.
            let a = self.reg_src(&ops[1], 1)?;
            let b = self.reg_src(&ops[2], 1)?;
            let d = self.dst(&ops[0], 1)?;
            let op = match (has(".bf16x2"), self.target.forms.f2fp_source_type) {
                (false, false) => "F2FP.PACK_AB",
                (false, true) => "F2FP.F16.F32.PACK_AB",
                (true, false) => "F2FP.BF16.PACK_AB",
                (true, true) => "F2FP.BF16.F32.PACK_AB",
            };
            self.push(Inst::new(
                op,
                vec![Operand::r(d), Operand::r(a), Operand::r(b)],
                vec![0],
            ));
            return Ok(());
        }
        if opcode == "cvt" {
            if let Some(r) = self.cvt_small(node, mods, ops) {
                return r;
            }
            // Conversions between floats and 8/16-bit types: ptxas's code from the table.
            if mods.iter().any(|m| {
                matches!(
                    m.as_str(),
                    ".u8" | ".s8" | ".b8" | ".u16" | ".s16" | ".b16" | ".f16"
                )
            }) {
                Self::need(node, ops, 2)?;
                if self.cvt_from_table(node, mods, ops)? {
                    return Ok(());
                }
                return unsup(&format!("cvt{}", mods.concat()));
            }
        }
        if let Some(r) = self.small_extending(node, opcode, mods, ops) {
            return r;
        }
        if let Some(e) = self.small_type_refusal(node, opcode, mods) {
            return Err(e);
        }
        match opcode {
            "ld" if has(".param") => self.ld_param(node, mods, ops),
            "st" if has(".param") => self.st_param(node, mods, ops),
            "call" => self.call(node, mods, ops),
            // `ldu` loads a value that is read-only for the kernel's lifetime: the
            // non-coherent path, as `ld.global.nc`.
            "ldu" if has(".global") => {
                let mut mods = mods.to_vec();
                mods.push(".nc".into());
                self.ld_st(node, &mods, ops, true, MemSpace::Global)
            }
            "ld" | "st" if has(".global") => {
                self.ld_st(node, mods, ops, opcode == "ld", MemSpace::Global)
            }
            "ld" | "st" if has(".shared") => {
                self.ld_st(node, mods, ops, opcode == "ld", MemSpace::Shared)
            }
            "ld" | "st" if has(".local") => {
                self.ld_st(node, mods, ops, opcode == "ld", MemSpace::Local)
            }
            "ld" | "st"
                if !mods.iter().any(|m| {
                    matches!(
                        m.as_str(),
                        ".local" | ".const" | ".param" | ".tex" | ".sreg"
                    )
                }) =>
            {
                self.ld_st(node, mods, ops, opcode == "ld", MemSpace::Generic)
            }
            "ld" if has(".const") => self.ld_const(node, mods, ops),
            "ld" | "st" => unsup(&format!("{opcode} in this state space")),
            "mov" => {
                Self::need(node, ops, 2)?;
                let ty = Self::ty_of(node, mods)?;
                if ty == Ty::Pred {
                    let d = self.pred_dst(&ops[0])?;
                    // A literal: 0 is false, anything else true (`mov.pred %p, -1;`).
                    let a = match ops[1].as_int() {
                        Some(0) => Operand::not(Reg::Zero(Class::P)),
                        Some(_) => Operand::pt(),
                        None => self.pred_src(&ops[1])?,
                    };
                    self.plop3(d, a, Operand::pt(), 0xf0);
                    return Ok(());
                }
                let w = ty.words();
                // `mov.b32 %r, {%rs1, %rs2}` packs two 16-bit registers (`PRMT 0x5410`),
                // `mov.b32 {%rs1, %rs2}, %r` unpacks (the low half as is, the high half
                // shifted down; a 16-bit register's upper half is unspecified).
                if w == 1
                    && let Some((vec_i, elems)) =
                        ops.iter().enumerate().find_map(|(i, o)| match o {
                            ast::Operand::Vector(v) => Some((i, v.elements().collect::<Vec<_>>())),
                            _ => None,
                        })
                {
                    if elems.len() != 2 {
                        return unsup("mov.b32 of a vector with other than two elements");
                    }
                    if vec_i == 1 {
                        let lo = self.reg_src(&elems[0], 1)?;
                        let hi = self.reg_src(&elems[1], 1)?;
                        let d = self.dst(&ops[0], 1)?;
                        let sel = Reg::v(self.tmp(1), 1);
                        self.mov_imm(sel, 0x5410);
                        self.push(Inst::new(
                            "PRMT",
                            vec![
                                Operand::r(d),
                                Operand::r(lo),
                                Operand::r(sel),
                                Operand::r(hi),
                            ],
                            vec![0],
                        ));
                    } else {
                        let a = self.reg_src(&ops[1], 1)?;
                        let t = Reg::v(self.tmp(1), 1);
                        self.push(Inst::new(
                            "SHF.R.U32.HI",
                            vec![
                                Operand::r(t),
                                Operand::rz(),
                                Operand::Imm(0x10),
                                Operand::r(a),
                            ],
                            vec![0],
                        ));
                        let l = Reg::v(self.tmp(1), 1);
                        self.push(Inst::new(
                            "MOV",
                            vec![Operand::r(l), Operand::r(a)],
                            vec![0],
                        ));
                        for (e, v) in elems.iter().zip([l, t]) {
                            if matches!(e, ast::Operand::Name(n) if n.is_sink()) {
                                continue;
                            }
                            let d = self.dst(e, 1)?;
                            self.push(Inst::new(
                                "MOV",
                                vec![Operand::r(d), Operand::r(v)],
                                vec![0],
                            ));
                        }
                    }
                    return Ok(());
                }
                // `mov.b64 %rd, {%r1, %r2}` packs, `mov.b64 {%r1, %r2}, %rd` unpacks.
                if w == 2
                    && let Some((vec_i, elems)) =
                        ops.iter().enumerate().find_map(|(i, o)| match o {
                            ast::Operand::Vector(v) => Some((i, v.elements().collect::<Vec<_>>())),
                            _ => None,
                        })
                {
                    if elems.len() != 2 {
                        return unsup("mov of a vector with other than two elements");
                    }
                    if vec_i == 1 {
                        let d = self.dst(&ops[0], 2)?;
                        let lo = self.reg_src(&elems[0], 1)?;
                        let hi = self.reg_src(&elems[1], 1)?;
                        // Through a temporary: an element may be a part of `d` itself.
                        let t = self.tmp(2);
                        for (k, x) in [(0u8, lo), (1, hi)] {
                            self.push(Inst::new(
                                "MOV",
                                vec![Operand::r(Reg::part(t, k)), Operand::r(x)],
                                vec![0],
                            ));
                        }
                        for k in 0..2 {
                            self.push(Inst::new(
                                "MOV",
                                vec![Operand::r(sub(d, k)), Operand::r(Reg::part(t, k))],
                                vec![0],
                            ));
                        }
                    } else {
                        let a = self.reg_src(&ops[1], 2)?;
                        let t = self.tmp(2);
                        self.push(Inst::new(
                            "MOV",
                            vec![Operand::r(Reg::part(t, 0)), Operand::r(sub(a, 0))],
                            vec![0],
                        ));
                        self.push(Inst::new(
                            "MOV",
                            vec![Operand::r(Reg::part(t, 1)), Operand::r(sub(a, 1))],
                            vec![0],
                        ));
                        for (k, e) in elems.iter().enumerate() {
                            if matches!(e, ast::Operand::Name(n) if n.is_sink()) {
                                continue;
                            }
                            let d = self.dst(e, 1)?;
                            self.push(Inst::new(
                                "MOV",
                                vec![Operand::r(d), Operand::r(Reg::part(t, k as u8))],
                                vec![0],
                            ));
                        }
                    }
                    return Ok(());
                }
                let d = self.dst(&ops[0], w)?;
                self.copy(node, d, &ops[1], w)
            }
            "isspacep" => self.isspacep(node, mods, ops),
            "cvta" => {
                if has(".shared") {
                    return self.cvta_shared(node, has(".to"), mods, ops);
                }
                if has(".local") {
                    return self.cvta_local(node, has(".to"), mods, ops);
                }
                if has(".const") {
                    return self.cvta_const(node, has(".to"), mods, ops);
                }
                // Generic and global addresses coincide on sm_70+ (ptxas emits no code).
                if !has(".global") {
                    return unsup("cvta outside the .global space");
                }
                Self::need(node, ops, 2)?;
                let w = Self::ty_of(node, mods)?.words();
                if w != 2 {
                    return unsup("32-bit cvta");
                }
                let d = self.dst(&ops[0], 2)?;
                self.copy(node, d, &ops[1], 2)
            }
            "add" | "sub" => self.add_sub(node, opcode == "sub", mods, ops),
            "mul" => self.mul(node, mods, ops),
            "mad" => self.mad(node, mods, ops),
            "fma" => self.ffma(node, mods, ops),
            "and" | "or" | "xor" => {
                Self::need(node, ops, 3)?;
                let ty = Self::ty_of(node, mods)?;
                let lut = match opcode {
                    "and" => 0xc0,
                    "or" => 0xfc,
                    _ => 0x3c,
                };
                if ty == Ty::Pred {
                    let d = self.pred_dst(&ops[0])?;
                    let a = self.pred_src(&ops[1])?;
                    let b = self.pred_src(&ops[2])?;
                    self.plop3(d, a, b, lut);
                    return Ok(());
                }
                let w = ty.words();
                let d = self.dst(&ops[0], w)?;
                let a = self.reg_src(&ops[1], w)?;
                let b = self.reg_src(&ops[2], w)?;
                for k in 0..w {
                    self.lop3(sub(d, k), sub(a, k), sub(b, k), lut);
                }
                Ok(())
            }
            "not" => {
                Self::need(node, ops, 2)?;
                let ty = Self::ty_of(node, mods)?;
                if ty == Ty::Pred {
                    let d = self.pred_dst(&ops[0])?;
                    let a = self.pred_src(&ops[1])?;
                    // ~a with a in the first LUT input (0xf0).
                    self.plop3(d, a, Operand::pt(), 0x0f);
                    return Ok(());
                }
                let w = ty.words();
                let d = self.dst(&ops[0], w)?;
                let a = self.reg_src(&ops[1], w)?;
                for k in 0..w {
                    self.push(Inst::new(
                        "LOP3.LUT",
                        vec![
                            Operand::r(sub(d, k)),
                            Operand::rz(),
                            Operand::r(sub(a, k)),
                            Operand::rz(),
                            Operand::Hex(0x33),
                            Operand::not(Reg::Zero(Class::P)),
                        ],
                        vec![0],
                    ));
                }
                Ok(())
            }
            "shl" | "shr" => self.shift(node, opcode == "shl", mods, ops),
            "setp" => self.setp(node, mods, ops, None),
            "set" => self.set(node, mods, ops),
            "selp" => {
                Self::need(node, ops, 4)?;
                let w = Self::ty_of(node, mods)?.words();
                let d = self.dst(&ops[0], w)?;
                let a = self.reg_src(&ops[1], w)?;
                let b = self.reg_src(&ops[2], w)?;
                let p = self.pred_src(&ops[3])?;
                for k in 0..w {
                    self.push(Inst::new(
                        "SEL",
                        vec![
                            Operand::r(sub(d, k)),
                            Operand::r(sub(a, k)),
                            Operand::r(sub(b, k)),
                            p.clone(),
                        ],
                        vec![0],
                    ));
                }
                Ok(())
            }
            "min" | "max" => self.min_max(node, opcode == "min", mods, ops),
            "copysign" => {
                // `copysign d, a, b`: b's magnitude with a's sign. ptxas 13.0.88: `LOP3.LUT d,
                // b, 0x80000000, a, 0xb8, !PT` (the high word; an f64's low word is b's).
                Self::need(node, ops, 3)?;
                let ty = Self::ty_of(node, mods)?;
                let Some((_, w)) = float_kind(ty).filter(|_| mods.len() == 1) else {
                    return unsup("copysign of this type");
                };
                let a = self.reg_src(&ops[1], w)?;
                let b = self.reg_src(&ops[2], w)?;
                let t = self.tmp(w);
                if w == 2 {
                    self.mov_reg(Reg::part(t, 0), sub(b, 0));
                }
                let m = Reg::v(self.tmp(1), 1);
                self.mov_imm(m, 0x8000_0000);
                self.push(Inst::new(
                    "LOP3.LUT",
                    vec![
                        Operand::r(Reg::part(t, w - 1)),
                        Operand::r(sub(b, w - 1)),
                        Operand::r(m),
                        Operand::r(sub(a, w - 1)),
                        Operand::Hex(0xb8),
                        Operand::not(Reg::Zero(Class::P)),
                    ],
                    vec![0],
                ));
                let d = self.dst(&ops[0], w)?;
                self.copy_words(d, t, w);
                Ok(())
            }
            "neg" | "abs" if has(".ftz") && has(".f32") && mods.len() == 2 => {
                // ptxas 13.0.88: `FADD.FTZ d, -RZ, -a` for neg (a subnormal input flushes to
                // -0) and `FADD.FTZ d, |a|, -RZ` for abs (to +0).
                Self::need(node, ops, 2)?;
                let a = self.reg_src(&ops[1], 1)?;
                let d = self.dst(&ops[0], 1)?;
                let minus_zero = Operand::neg(Reg::Zero(Class::R));
                let (x, y) = if opcode == "neg" {
                    (minus_zero, Operand::neg(a))
                } else {
                    let abs = Operand::Reg {
                        reg: a,
                        neg: false,
                        not: false,
                        abs: true,
                        sel: ir::Sel::None,
                    };
                    (abs, minus_zero)
                };
                self.push(Inst::new("FADD.FTZ", vec![Operand::r(d), x, y], vec![0]));
                Ok(())
            }
            "neg" | "abs" => {
                Self::need(node, ops, 2)?;
                let ty = Self::ty_of(node, mods)?;
                if let Some(r) = self.int_neg_abs(opcode == "neg", ty, ops) {
                    return r;
                }
                let Some((_, w)) = float_kind(ty).filter(|_| !has(".ftz")) else {
                    return unsup(&format!("{opcode} of this type"));
                };
                // ptxas 13.0.88 (sm_80, sm_90): arithmetic with -0, not sign-bit operations:
                // `FADD d, |a|, -RZ` / `FADD d, -a, -RZ` for f32, `DADD d, -RZ, |a|` /
                // `DADD d, -RZ, -a` for f64. The same for every number, but a NaN comes out
                // as the canonical NaN (PTX leaves the NaN unspecified); kiln writes ptxas's
                // instructions so that it writes ptxas's bytes.
                let d = self.dst(&ops[0], w)?;
                let a = self.reg_src(&ops[1], w)?;
                let src = if opcode == "neg" {
                    Operand::neg(a)
                } else {
                    Operand::Reg {
                        reg: a,
                        neg: false,
                        not: false,
                        abs: true,
                        sel: ir::Sel::None,
                    }
                };
                let minus_zero = Operand::neg(Reg::Zero(Class::R));
                let inst = if w == 2 {
                    Inst::new("DADD", vec![Operand::r(d), minus_zero, src], vec![0])
                } else {
                    Inst::new("FADD", vec![Operand::r(d), src, minus_zero], vec![0])
                };
                self.push(inst);
                Ok(())
            }
            "cvt" => self.cvt(node, mods, ops),
            "div" | "rcp" | "sqrt" | "rsqrt" if has(".f64") => {
                // ptxas's f64 routines (`cargo xtask math-forms`), slow paths inlined.
                Self::need(node, ops, if opcode == "div" { 3 } else { 2 })?;
                if self.math_from_table(opcode, mods, ops)? {
                    Ok(())
                } else {
                    unsup(&format!("{opcode}{}", mods.concat()))
                }
            }
            "div" if fmath::is_float_div(mods) && (has(".approx") || has(".full")) => {
                self.div_approx(node, mods, ops)
            }
            "div" if has(".f32") && has(".rn") && !has(".ftz") => self.div_rn_f32(node, mods, ops),
            "div" if has(".f32") && [".rn", ".rz", ".rm", ".rp"].iter().any(|r| has(r)) => {
                // ptxas's routine in the other rounding modes and with `.ftz`
                // (`cargo xtask math-forms`).
                Self::need(node, ops, 3)?;
                if self.math_from_table(opcode, mods, ops)? {
                    Ok(())
                } else {
                    unsup(&format!("{opcode}{}", mods.concat()))
                }
            }
            "rcp" | "sqrt" | "rsqrt" | "ex2" | "lg2" | "sin" | "cos" | "tanh" if has(".approx") => {
                self.approx_unary(node, opcode, mods, ops)
            }
            "rcp" | "sqrt" if has(".f32") => {
                Self::need(node, ops, 2)?;
                if self.math_from_table(opcode, mods, ops)? {
                    Ok(())
                } else {
                    unsup(&format!("{opcode}{}", mods.concat()))
                }
            }
            "div" | "rem" => {
                Self::need(node, ops, 3)?;
                let ty = Self::ty_of(node, mods)?;
                let small = matches!(ty, Ty::U16 | Ty::S16 | Ty::B16);
                if mods.len() == 1
                    && matches!(ty, Ty::U64 | Ty::S64)
                    && self.math_from_table(opcode, mods, ops)?
                {
                    // ptxas's 64-bit routine (`cargo xtask math-forms`).
                    return Ok(());
                }
                if mods.len() != 1 || !(small || matches!(ty, Ty::U32 | Ty::B32 | Ty::S32)) {
                    return unsup(&format!("{opcode} of this type"));
                }
                let mut a = self.reg_src(&ops[1], 1)?;
                let mut b = self.reg_src(&ops[2], 1)?;
                if small {
                    // 16-bit operands extended to 32 bits: the 32-bit quotient and remainder
                    // of the extended values have the 16-bit results in their low halves.
                    a = self.extend_small(a, 16, ty == Ty::S16);
                    b = self.extend_small(b, 16, ty == Ty::S16);
                }
                let d = self.dst(&ops[0], 1)?;
                let want_rem = opcode == "rem";
                if ty.signed() {
                    self.sdivrem(d, a, b, want_rem);
                } else {
                    let (q, r) = self.udivrem(a, b);
                    let res = if want_rem { r } else { q };
                    self.push(Inst::new(
                        "MOV",
                        vec![Operand::r(d), Operand::r(res)],
                        vec![0],
                    ));
                }
                Ok(())
            }
            "bra" => {
                Self::need(node, ops, 1)?;
                let name = match &ops[0] {
                    ast::Operand::Name(n) => {
                        n.name().map(|t| t.text().to_string()).unwrap_or_default()
                    }
                    _ => return unsup("indirect branches"),
                };
                let target = *self
                    .labels
                    .get(&name)
                    .ok_or_else(|| malformed(node, format!("undefined label `{name}`")))?;
                self.push(Inst::new("BRA", vec![Operand::Label(target)], vec![]));
                let next = self.f.new_block();
                self.start_block(next);
                Ok(())
            }
            "trap" => {
                // ptxas 13.0.88: `BPT.TRAP 0x1`, branched around when guarded.
                let inst = Inst::new("BPT.TRAP", vec![Operand::Imm(1)], vec![]);
                match self.guard.take() {
                    Some(g) => {
                        let end = self.skip_unless(g);
                        self.push(inst);
                        self.start_block(end);
                        self.guard = Some(g);
                    }
                    None => self.push(inst),
                }
                Ok(())
            }
            "ret" if self.ret_target.is_some() => self.inlined_ret(),
            "ret" | "exit" => {
                self.push(Inst::new("EXIT", vec![], vec![]));
                let next = self.f.new_block();
                self.start_block(next);
                Ok(())
            }
            "bar" if mods.len() == 2 && has(".warp") && has(".sync") => {
                // `bar.warp.sync -1`: the whole warp reconverges (kiln emits no BSSY/BSYNC,
                // so the convergence is explicit). Another mask: `WARPSYNC mask` as before a
                // warp collective (a constant mask synchronizes only its own threads), kept
                // even where the collectives' syncs are dropped: here it is the barrier.
                Self::need(node, ops, 1)?;
                if self.guard.is_some() {
                    return unsup("predicated bar.warp.sync");
                }
                if ops[0].as_int().is_some_and(|m| m as u32 == u32::MAX) {
                    let inst = self.full_warpsync();
                    self.push(inst);
                } else {
                    self.collective_sync(node, &ops[0], true)?;
                    self.collective_syncs.pop();
                }
                Ok(())
            }
            "bar" | "barrier" if has(".red") => self.bar_red(node, mods, ops),
            "bar" | "barrier" => {
                let ok = mods
                    .iter()
                    .all(|m| matches!(m.as_str(), ".sync" | ".aligned"))
                    && (has(".sync") || (opcode == "bar" && mods.is_empty()))
                    && ops.len() == 1
                    && ops[0].as_int() == Some(0);
                if !ok || self.guard.is_some() {
                    return unsup("barrier forms other than `bar.sync 0`");
                }
                self.uses_barrier = true;
                self.push(Inst::new(
                    "BAR.SYNC.DEFER_BLOCKING",
                    vec![Operand::Imm(0)],
                    vec![],
                ));
                Ok(())
            }
            "shfl" => self.shfl(node, mods, ops),
            "tex" => self.tex(node, mods, ops),
            "sad" if mods.len() == 1 && (has(".s32") || has(".u32")) => {
                // ptxas 13.0.88: `VABSDIFF[.U32] d, a, b, c` (sm_80 and sm_90).
                Self::need(node, ops, 4)?;
                let a = self.reg_src(&ops[1], 1)?;
                let b = self.reg_src(&ops[2], 1)?;
                let c = self.reg_src(&ops[3], 1)?;
                let d = self.dst(&ops[0], 1)?;
                let op = if has(".u32") {
                    "VABSDIFF.U32"
                } else {
                    "VABSDIFF"
                };
                self.push(Inst::new(
                    op,
                    vec![Operand::r(d), Operand::r(a), Operand::r(b), Operand::r(c)],
                    vec![0],
                ));
                Ok(())
            }
            "clz" | "brev" | "popc" | "bfind" => self.bit_count(node, opcode, mods, ops),
            "testp" => self.testp(node, mods, ops),
            "bmsk" | "bfe" | "bfi" => self.bitfield(node, opcode, mods, ops),
            "slct" => self.slct(node, mods, ops),
            "atom" | "red" => self.atom(node, opcode == "red", mods, ops),
            "shf" => self.shf(node, mods, ops),
            "prmt" => self.prmt(node, mods, ops),
            "vote" => self.vote(node, mods, ops),
            "match" => self.match_sync(node, mods, ops),
            "redux" => self.redux(node, mods, ops),
            "membar" | "fence" => self.fence(node, opcode, mods),
            "griddepcontrol" => self.griddepcontrol(node, mods),
            "mul24" => self.mul24(node, mods, ops),
            "nanosleep" => {
                // `NANOSLEEP t` with t an immediate or a register (ptxas's form; sm_80 reads a
                // parameter directly as `c[0x0][o]`, kiln from a register).
                Self::need(node, ops, 1)?;
                if mods.iter().any(|m| m != ".u32") {
                    return unsup(&format!("nanosleep{}", mods.concat()));
                }
                let t = match self.src(&ops[0])? {
                    Src::Imm(v) if v <= u64::from(u32::MAX) => Operand::Imm(v as i64),
                    _ => Operand::r(self.reg_src(&ops[0], 1)?),
                };
                self.push(Inst::new("NANOSLEEP", vec![t], vec![]));
                Ok(())
            }
            "activemask" => self.activemask(node, ops),
            other => unsup(&format!("instruction `{other}`")),
        }
    }

    fn pred_src(&self, o: &ast::Operand) -> Result<Operand, LowerError> {
        let (inner, negated) = match o {
            ast::Operand::Prefix(p) if p.op().is_some_and(|t| t.text() == "!") => (
                p.expr()
                    .ok_or_else(|| malformed(o.syntax(), "`!` without operand"))?,
                true,
            ),
            _ => (o.clone(), false),
        };
        match self.src(&inner)? {
            Src::Reg(r, 1) if self.f.vregs[r].class == Class::P => Ok(if negated {
                Operand::not(Reg::v(r, 1))
            } else {
                Operand::r(Reg::v(r, 1))
            }),
            // A literal (`xor.pred %p, %q, -1`): 0 is false, anything else true.
            Src::Imm(v) => Ok(if (v != 0) != negated {
                Operand::pt()
            } else {
                Operand::not(Reg::Zero(Class::P))
            }),
            _ => Err(unsupported(o.syntax(), "predicate operand form")),
        }
    }

    fn copy(
        &mut self,
        node: &SyntaxNode,
        d: Reg,
        src: &ast::Operand,
        w: u8,
    ) -> Result<(), LowerError> {
        match self.src(src)? {
            Src::Reg(r, sw) if sw == w && self.f.vregs[r].class == Class::R => {
                for k in 0..w {
                    self.push(Inst::new(
                        "MOV",
                        vec![Operand::r(sub(d, k)), Operand::r(Reg::part(r, k))],
                        vec![0],
                    ));
                }
                Ok(())
            }
            Src::Reg(..) => Err(unsupported(
                node,
                "mov between registers of different widths",
            )),
            Src::Imm(v) => {
                for k in 0..w {
                    self.mov_imm(sub(d, k), (v >> (32 * k)) as u32);
                }
                Ok(())
            }
            Src::Special(s @ Sreg::Clock { wide: true, .. }) if w == 2 => {
                self.special(d, s);
                Ok(())
            }
            Src::Special(Sreg::Clock { wide: true, .. }) => Err(unsupported(
                node,
                "a 64-bit clock (%clock64, %globaltimer) into a 32-bit register",
            )),
            Src::Special(s) if w == 1 => {
                self.special(d, s);
                Ok(())
            }
            Src::Shared(at) => {
                self.shared_addr(sub(d, 0), at);
                if w == 2 {
                    self.mov_imm(sub(d, 1), 0);
                }
                Ok(())
            }
            Src::Local(at) => {
                self.local_addr(sub(d, 0), at);
                if w == 2 {
                    self.mov_imm(sub(d, 1), 0);
                }
                Ok(())
            }
            Src::Global(slot) if w == 2 => {
                self.const_load_in(Operand::r(d), modvar::ADDRESS_TABLE_BANK, 8 * slot, 2);
                Ok(())
            }
            Src::Global(_) => Err(unsupported(node, "32-bit global addresses")),
            Src::Const(at) => {
                self.mov_imm(sub(d, 0), at);
                if w == 2 {
                    self.mov_imm(sub(d, 1), 0);
                }
                Ok(())
            }
            Src::Special(_) => Err(unsupported(node, "64-bit special registers")),
        }
    }

    /// `d = lut(a, b, PT)` on predicates (LUT inputs a = 0xf0, b = 0xcc, c = 0xaa), the
    /// second destination unused (PT, LUT 0).
    fn plop3(&mut self, d: Reg, a: Operand, b: Operand, lut: u32) {
        self.push(Inst::new(
            "PLOP3.LUT",
            vec![
                Operand::r(d),
                Operand::pt(),
                a,
                b,
                Operand::pt(),
                Operand::Hex(lut),
                Operand::Hex(0),
            ],
            vec![0],
        ));
    }

    fn lop3(&mut self, d: Reg, a: Reg, b: Reg, lut: u32) {
        self.push(Inst::new(
            "LOP3.LUT",
            vec![
                Operand::r(d),
                Operand::r(a),
                Operand::r(b),
                Operand::rz(),
                Operand::Hex(lut),
                Operand::not(Reg::Zero(Class::P)),
            ],
            vec![0],
        ));
    }

    fn guarded(&mut self, mut i: Inst, p: Reg) {
        i.guard = Some(Guard {
            pred: p,
            negated: false,
        });
        self.push(i);
    }

    /// Unsigned 32-bit division: ptxas's sequence (reciprocal estimate rounded up, one Newton
    /// step, two corrections; a zero divisor gives all ones).
    /// Returns (quotient, remainder) registers. Every intermediate is a fresh temporary, so
    /// the internal guards are safe under an outer guard.
    fn udivrem(&mut self, a: Reg, b: Reg) -> (Reg, Reg) {
        let t = |cx: &mut Self| Reg::v(cx.tmp(1), 1);
        let rz = Operand::rz;
        let f = t(self);
        self.push(Inst::new(
            "I2F.U32.RP",
            vec![Operand::r(f), Operand::r(b)],
            vec![0],
        ));
        self.push(Inst::new(
            "MUFU.RCP",
            vec![Operand::r(f), Operand::r(f)],
            vec![0],
        ));
        let e = t(self);
        self.push(Inst::new(
            "IADD3",
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
            "F2I.FTZ.U32.TRUNC.NTZ",
            vec![Operand::r(q0), Operand::r(e)],
            vec![0],
        ));
        let nq0 = t(self);
        self.push(Inst::new(
            "IADD3",
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
            "IMAD.HI.U32",
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
            "IADD3",
            vec![Operand::r(q1), Operand::r(q0), Operand::r(h), rz()],
            vec![0],
        ));
        let q = t(self);
        self.push(Inst::new(
            "IMAD.HI.U32",
            vec![Operand::r(q), Operand::r(q1), Operand::r(a), rz()],
            vec![0],
        ));
        let w2 = self.tmp(2);
        self.imad_wide(Reg::v(w2, 2), q, b, false, None);
        let r = t(self);
        self.push(Inst::new(
            "IADD3",
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
                "ISETP.GE.U32.AND",
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
                    "IADD3",
                    vec![Operand::r(r), Operand::r(r), Operand::neg(b), rz()],
                    vec![0],
                ),
                p,
            );
            self.guarded(
                Inst::new(
                    "IADD3",
                    vec![Operand::r(q), Operand::r(q), Operand::r(one), rz()],
                    vec![0],
                ),
                p,
            );
        }
        // b == 0: both results are ~b (all ones), as ptxas makes them.
        let nz = Reg::v(self.ptmp(), 1);
        self.push(Inst::new(
            "ISETP.NE.U32.AND",
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
            "LOP3.LUT",
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
                "SEL",
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
    fn sdivrem(&mut self, d: Reg, a: Reg, b: Reg, want_rem: bool) {
        let t = |cx: &mut Self| Reg::v(cx.tmp(1), 1);
        let abs = |cx: &mut Self, x: Reg| -> (Reg, Reg) {
            let neg = Reg::v(cx.ptmp(), 1);
            cx.push(Inst::new(
                "ISETP.LT.AND",
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
                "IADD3",
                vec![Operand::r(m), Operand::neg(x), Operand::rz(), Operand::rz()],
                vec![0],
            ));
            let out = t(cx);
            cx.push(Inst::new(
                "SEL",
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
                "PLOP3.LUT",
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
            "IADD3",
            vec![Operand::r(m), Operand::neg(v), Operand::rz(), Operand::rz()],
            vec![0],
        ));
        self.push(Inst::new(
            "SEL",
            vec![Operand::r(d), Operand::r(m), Operand::r(v), Operand::r(neg)],
            vec![0],
        ));
    }

    /// The width in words of a register operand, if it is one.
    fn reg_width(&self, o: &ast::Operand) -> Option<u8> {
        match self.src(o).ok()? {
            Src::Reg(_, w) => Some(w),
            _ => None,
        }
    }

    /// Writes the high word of the 64-bit `d` from its low word: sign or zero extension.
    fn extend_high(&mut self, d: Reg, signed: bool) {
        if signed {
            let s = self.tmp(1);
            self.mov_imm(Reg::v(s, 1), 31);
            self.push(Inst::new(
                "SHF.R.S32.HI",
                vec![
                    Operand::r(sub(d, 1)),
                    Operand::rz(),
                    Operand::r(Reg::v(s, 1)),
                    Operand::r(sub(d, 0)),
                ],
                vec![0],
            ));
        } else {
            self.mov_imm(sub(d, 1), 0);
        }
    }

    /// `[name]` / `[name+imm]` → (name, offset).
    fn address_name(&self, o: &ast::Operand) -> Result<(String, i64), LowerError> {
        let bad = || unsupported(o.syntax(), format!("address `{}`", o.syntax().text()));
        let ast::Operand::Address(a) = o else {
            return Err(bad());
        };
        let inner: Vec<ast::Operand> = a.operands().collect();
        if inner.len() != 1 {
            return Err(bad());
        }
        let name_of = |e: &ast::Operand| match e {
            ast::Operand::Name(n) if n.components().next().is_none() => {
                n.name().map(|t| t.text().to_string())
            }
            _ => None,
        };
        match &inner[0] {
            ast::Operand::Binary(b) => {
                let l = b.lhs().ok_or_else(bad)?;
                let r = b.rhs().ok_or_else(bad)?;
                let n = name_of(&l).ok_or_else(bad)?;
                let v = r.as_int().ok_or_else(bad)? as i64;
                match b.op().map(|t| t.text().to_string()).as_deref() {
                    Some("+") => Ok((n, v)),
                    Some("-") => Ok((n, -v)),
                    _ => Err(bad()),
                }
            }
            e => Ok((name_of(e).ok_or_else(bad)?, 0)),
        }
    }

    fn ld_st(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
        load: bool,
        space: MemSpace,
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 2)?;
        // Shared and local memory: 32-bit window addresses, no memory descriptor.
        let shared = matches!(space, MemSpace::Shared | MemSpace::Local);
        let local = space == MemSpace::Local;
        let mut nc = false;
        let mut volatile = false;
        let mut strong: Option<&'static str> = None;
        let mut evict: Option<&'static str> = None;
        let mut size = None;
        let mut vector = 1u32;
        // Memory orders (`.relaxed`/`.acquire`/`.release` with a scope): strong accesses at
        // the scope; acquire loads are followed by `CCTL.IVALL` and release stores preceded
        // by `MEMBAR.ALL.<scope>` + `ERRBAR` (+ `CGAERRBAR` on sm_90) beyond the CTA, as
        // ptxas 13.0.88 emits them. Shared memory ignores the scope (plain LDS/STS).
        let (mut ordered, mut acquire, mut release) = (false, false, false);
        let mut scope = "";
        for m in mods {
            match m.as_str() {
                ".global" | ".shared" | ".local" | ".weak" => {}
                ".relaxed" => ordered = true,
                ".acquire" if load => (ordered, acquire) = (true, true),
                ".release" if !load => (ordered, release) = (true, true),
                ".cta" | ".gpu" | ".sys" => scope = m.as_str(),
                // Volatile: shared accesses are plain LDS/STS, global and generic ones
                // `.STRONG.SYS` (ptxas's forms).
                ".volatile" => volatile = true,
                ".nc" if load && space == MemSpace::Global => nc = true,
                // Cache operators, as ptxas 13.0.88 maps them (nvdisasm on sm_80/sm_90):
                // evict-first and last-use come before the size (`STG.E.EF.64`), the
                // strong scopes after it (`LDG.E.64.STRONG.SM`).
                ".ca" | ".wb" if !shared => strong = Some(".STRONG.SM"),
                ".cg" if !shared => strong = Some(".STRONG.GPU"),
                ".cv" if load && !shared => strong = Some(".STRONG.SYS"),
                ".wt" if !load && !shared => strong = Some(".STRONG.SYS"),
                ".cs" if !shared => evict = Some(".EF"),
                ".lu" if load && !shared => evict = Some(".LU"),
                ".v2" => vector = 2,
                ".v4" => vector = 4,
                // Sub-word accesses: (bytes, SASS suffix, sign-extending).
                ".u8" | ".b8" => size = Some((1, ".U8")),
                ".s8" => size = Some((1, ".S8")),
                ".u16" | ".b16" => size = Some((2, ".U16")),
                ".s16" => size = Some((2, ".S16")),
                ".b32" | ".u32" | ".s32" | ".f32" => size = Some((4, "")),
                ".b64" | ".u64" | ".s64" | ".f64" => size = Some((8, ".64")),
                other => return Err(unsupported(node, format!("ld/st modifier {other}"))),
            }
        }
        let Some((elem, suffix)) = size else {
            return Err(malformed(node, "ld/st without a type"));
        };
        if ordered == scope.is_empty() {
            return Err(malformed(
                node,
                "a memory order needs a scope and the reverse",
            ));
        }
        if ordered && (volatile || strong.is_some() || nc || local) {
            return Err(unsupported(node, "this combination of ld/st modifiers"));
        }
        if ordered && !shared {
            strong = Some(match scope {
                ".cta" => ".STRONG.SM",
                ".sys" => ".STRONG.SYS",
                _ => ".STRONG.GPU",
            });
        }
        let beyond_cta = scope != ".cta" && !shared;
        if release && beyond_cta {
            let sc = if scope == ".sys" { "SYS" } else { "GPU" };
            self.push(Inst::new(format!("MEMBAR.ALL.{sc}"), vec![], vec![]));
            self.push(Inst::new("ERRBAR", vec![], vec![]));
            if self.target.forms.clusters {
                self.push(Inst::new("CGAERRBAR", vec![], vec![]));
            }
        } else if release && !shared {
            self.push(Inst::new("MEMBAR.ALL.CTA", vec![], vec![]));
        }
        if acquire && beyond_cta {
            self.pending_acquire = true;
        }
        let bytes = elem * vector;
        if vector > 1 && bytes > 16 {
            return Err(unsupported(node, "vector ld/st of 256-bit size"));
        }
        // Vectors of 8/16-bit elements move as one 16/32/64-bit access, the elements packed
        // and unpacked with PRMT (ptxas's form).
        let packed = vector > 1 && elem < 4;
        // Stores of sub-words write the low bytes (no sign in the SASS form).
        let suffix = match (load, bytes) {
            (false, 1) => ".U8",
            (_, 2) if packed => ".U16",
            (_, 4) if packed => "",
            (false, 2) => ".U16",
            (_, 8) => ".64",
            (_, 16) => ".128",
            _ => suffix,
        };
        let w: u8 = if bytes >= 8 { (bytes / 4) as u8 } else { 1 };
        let (addr_op, val_op) = if load {
            (&ops[1], &ops[0])
        } else {
            (&ops[0], &ops[1])
        };
        let (name, off) = self.address_name(addr_op)?;
        let desc_operand = self.target.forms.desc_operand;
        let (mem, mut op) = if shared {
            // Shared addresses are 32-bit offsets in the CTA's window (sm_80: window offset 0
            // is the first static variable); a 64-bit register holds one in its low word.
            let offset = i32::try_from(off)
                .ok()
                .filter(|o| (-(1 << 23)..(1 << 23)).contains(o))
                .ok_or_else(|| unsupported(addr_op.syntax(), "address offset out of range"))?;
            let (base, offset) = if let Some(&at) = self.locals.get(&name).filter(|_| local) {
                // A frame variable: relative to the stack pointer (`STL [R1+0x4]`).
                (self.stack_pointer(), (at as i32).wrapping_add(offset))
            } else if let Some(&at) = self.shared.get(&name).filter(|_| !local) {
                let t = Reg::v(self.tmp(1), 1);
                self.shared_addr(t, at.wrapping_add(offset as u32));
                (t, 0)
            } else {
                let (r, rty) = *self
                    .regs
                    .get(&name)
                    .ok_or_else(|| unsupported(addr_op.syntax(), format!("address of `{name}`")))?;
                if rty == Ty::Pred || rty == Ty::F32 {
                    return Err(unsupported(
                        addr_op.syntax(),
                        "shared address register type",
                    ));
                }
                (Reg::part(r, 0), offset)
            };
            let mem = Operand::Mem {
                base,
                offset,
                desc: None,
            };
            let op = match (local, load) {
                (false, true) => "LDS",
                (false, false) => "STS",
                (true, true) => "LDL",
                (true, false) => "STL",
            };
            (mem, op.to_string())
        } else {
            let generic = space == MemSpace::Generic;
            let base = self.global_base(&name, addr_op)?;
            let offset = i32::try_from(off)
                .ok()
                .filter(|o| (-(1 << 23)..(1 << 23)).contains(o))
                .ok_or_else(|| unsupported(addr_op.syntax(), "address offset out of range"))?;
            self.needs_desc = true;
            // The tables know `.STRONG.SYS` accesses only without an offset: add it first.
            let (base, offset) = if volatile && offset != 0 {
                let k = self.tmp(2);
                let kv = i64::from(offset) as u64;
                self.mov_imm(Reg::part(k, 0), kv as u32);
                self.mov_imm(Reg::part(k, 1), (kv >> 32) as u32);
                let t = self.tmp(2);
                let p = Reg::v(self.ptmp(), 1);
                self.push(Inst::new(
                    "IADD3",
                    vec![
                        Operand::r(Reg::part(t, 0)),
                        Operand::r(p),
                        Operand::r(Reg::part(base, 0)),
                        Operand::r(Reg::part(k, 0)),
                        Operand::rz(),
                    ],
                    vec![0, 1],
                ));
                self.push(Inst::new(
                    "IADD3.X",
                    vec![
                        Operand::r(Reg::part(t, 1)),
                        Operand::r(Reg::part(base, 1)),
                        Operand::r(Reg::part(k, 1)),
                        Operand::rz(),
                        Operand::r(p),
                        Operand::not(Reg::Zero(Class::P)),
                    ],
                    vec![0],
                ));
                (t, 0)
            } else {
                (base, offset)
            };
            let mem = Operand::Mem {
                base: Reg::v(base, 2),
                offset,
                desc: desc_operand.then(desc_reg),
            };
            let op = match (generic, load) {
                (false, true) => "LDG.E",
                (false, false) => "STG.E",
                (true, true) => "LD.E",
                (true, false) => "ST.E",
            };
            (mem, op.to_string())
        };
        if let Some(e) = evict {
            op.push_str(e);
        }
        op.push_str(suffix);
        if nc {
            op.push_str(".CONSTANT");
        }
        if volatile && !shared {
            op.push_str(".STRONG.SYS");
        } else if let Some(st) = strong {
            op.push_str(st);
        }
        let elems: Option<Vec<ast::Operand>> = match val_op {
            ast::Operand::Vector(v) => Some(v.elements().collect()),
            _ => None,
        };
        if elems.as_ref().map_or(1, Vec::len) != vector as usize {
            return Err(malformed(
                val_op.syntax(),
                "vector operand of another length",
            ));
        }
        let ew: u8 = if elem == 8 { 2 } else { 1 };
        if packed {
            let elems = elems.unwrap_or_default();
            let signed = mods.iter().any(|m| matches!(m.as_str(), ".s8" | ".s16"));
            let t = self.tmp(w);
            let prmt = |cx: &mut Self, d: Reg, a: Reg, sel: u32, b: Operand| {
                cx.push(Inst::new(
                    "PRMT",
                    vec![
                        Operand::r(d),
                        Operand::r(a),
                        Operand::Imm(i64::from(sel)),
                        b,
                    ],
                    vec![0],
                ));
            };
            if load {
                let mut inst = Inst::new(op, vec![Operand::r(Reg::v(t, w)), mem], vec![0]);
                if !desc_operand && !shared {
                    inst.implicit_uses.push(desc_reg());
                }
                self.push(inst);
                for (k, e) in elems.iter().enumerate() {
                    if matches!(e, ast::Operand::Name(n) if n.is_sink()) {
                        continue;
                    }
                    let at = k as u32 * elem;
                    let (word, lo) = ((at / 4) as u8, at % 4);
                    // Result bytes: the element's bytes, then zeros (byte 7 of RZ) or copies
                    // of its sign (selector nibble 8 | byte).
                    let top = lo + elem - 1;
                    let fill = if signed { 8 | top } else { 7 };
                    let mut sel = 0u32;
                    for i in 0..4 {
                        let nib = if i < elem { lo + i } else { fill };
                        sel |= nib << (4 * i);
                    }
                    let d = self.dst(e, 1)?;
                    prmt(self, d, Reg::part(t, word), sel, Operand::rz());
                }
                self.finish_acquire();
                return Ok(());
            }
            let mut regs = Vec::new();
            for e in &elems {
                regs.push(self.reg_src(e, 1)?);
            }
            let halves: Vec<Reg> = if elem == 1 {
                // Bytes in pairs: [e0.b0, e1.b0] in the low half.
                regs.chunks(2)
                    .map(|p| {
                        let h = Reg::v(self.tmp(1), 1);
                        prmt(self, h, p[0], 0x0040, Operand::r(p[1]));
                        h
                    })
                    .collect()
            } else {
                regs.clone()
            };
            if bytes == 2 {
                self.push(Inst::new(
                    "MOV",
                    vec![Operand::r(Reg::v(t, 1)), Operand::r(halves[0])],
                    vec![0],
                ));
            } else {
                for (j, pair) in halves.chunks(2).enumerate() {
                    prmt(
                        self,
                        Reg::part(t, j as u8),
                        pair[0],
                        0x5410,
                        Operand::r(pair[1]),
                    );
                }
            }
            let mut inst = Inst::new(op, vec![mem, Operand::r(Reg::v(t, w))], vec![]);
            if !desc_operand && !shared {
                inst.implicit_uses.push(desc_reg());
            }
            self.push(inst);
            return Ok(());
        }
        let mut inst = match (&elems, load) {
            (None, true) if w == 1 && self.reg_width(val_op) == Some(2) => {
                // Into a 64-bit register: load the low word, then extend.
                let d = self.dst(val_op, 2)?;
                let mut load = Inst::new(op, vec![Operand::r(sub(d, 0)), mem], vec![0]);
                if !self.target.forms.desc_operand && !shared {
                    load.implicit_uses.push(desc_reg());
                }
                self.push(load);
                let signed = mods
                    .iter()
                    .any(|m| matches!(m.as_str(), ".s8" | ".s16" | ".s32"));
                self.extend_high(d, signed);
                self.finish_acquire();
                return Ok(());
            }
            (None, true) => {
                let d = self.dst(val_op, w)?;
                Inst::new(op, vec![Operand::r(d), mem], vec![0])
            }
            (None, false) if w == 1 && self.reg_width(val_op) == Some(2) => {
                // From a 64-bit register: PTX stores the low bits.
                let v = self.reg_src(val_op, 2)?;
                Inst::new(op, vec![mem, Operand::r(sub(v, 0))], vec![])
            }
            (None, false) => {
                let v = self.reg_src(val_op, w)?;
                Inst::new(op, vec![mem, Operand::r(v)], vec![])
            }
            (Some(_), false) => {
                // Gather the elements into an aligned register group.
                let t = self.tmp(w);
                for (k, e) in elems.iter().flatten().enumerate() {
                    let r = self.reg_src(e, ew)?;
                    for j in 0..ew {
                        self.push(Inst::new(
                            "MOV",
                            vec![
                                Operand::r(Reg::part(t, k as u8 * ew + j)),
                                Operand::r(sub(r, j)),
                            ],
                            vec![0],
                        ));
                    }
                }
                Inst::new(op, vec![mem, Operand::r(Reg::v(t, w))], vec![])
            }
            (Some(_), true) => {
                // Load into an aligned group, then copy out (after the load, below).
                let t = self.tmp(w);
                let mut load = Inst::new(op, vec![Operand::r(Reg::v(t, w)), mem], vec![0]);
                if !self.target.forms.desc_operand && !shared {
                    load.implicit_uses.push(desc_reg());
                }
                self.push(load);
                for (k, e) in elems.iter().flatten().enumerate() {
                    if matches!(e, ast::Operand::Name(n) if n.is_sink()) {
                        continue;
                    }
                    let d = self.dst(e, ew)?;
                    for j in 0..ew {
                        self.push(Inst::new(
                            "MOV",
                            vec![
                                Operand::r(sub(d, j)),
                                Operand::r(Reg::part(t, k as u8 * ew + j)),
                            ],
                            vec![0],
                        ));
                    }
                }
                self.finish_acquire();
                return Ok(());
            }
        };
        if !desc_operand && !shared {
            // sm_80 LDG/STG read the memory descriptor from UR4 without printing it.
            inst.implicit_uses.push(desc_reg());
        }
        self.push(inst);
        self.finish_acquire();
        Ok(())
    }

    /// After an acquire load beyond the CTA: `CCTL.IVALL` (later loads miss in L1).
    fn finish_acquire(&mut self) {
        if std::mem::take(&mut self.pending_acquire) {
            self.push(Inst::new("CCTL.IVALL", vec![], vec![]));
        }
    }

    fn add_sub(
        &mut self,
        node: &SyntaxNode,
        is_sub: bool,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 3)?;
        let ty = Self::ty_of(node, mods)?;
        if let Some((p, w)) = float_kind(ty) {
            let sfx = float_suffix(node, &mods[..mods.len() - 1], true)?;
            if let Some(c) = self.contractions.get(&node.text_range()).cloned()
                && let Some(mul) = self.contracted_muls.get(&c.mul).cloned()
            {
                // ptxas's contraction (`hir::contract`): `{p}FMA d, ±a, b, ±c` with the
                // mul's factors (unchanged since the mul, the rule makes sure).
                let factors: Vec<ast::Operand> = mul.operands().skip(1).collect();
                let d = self.dst(&ops[0], w)?;
                let a = self.reg_src(&factors[0], w)?;
                let b = self.reg_src(&factors[1], w)?;
                let c_reg = self.reg_src(&ops[3 - c.product_operand], w)?;
                let sign = |r: Reg, neg: bool| if neg { Operand::neg(r) } else { Operand::r(r) };
                self.push(Inst::new(
                    format!("{p}FMA{sfx}"),
                    vec![
                        Operand::r(d),
                        sign(a, c.negate_product),
                        Operand::r(b),
                        sign(c_reg, c.negate_addend),
                    ],
                    vec![0],
                ));
                return Ok(());
            }
            let d = self.dst(&ops[0], w)?;
            let a = self.reg_src(&ops[1], w)?;
            let b = self.reg_src(&ops[2], w)?;
            let bo = if is_sub {
                Operand::neg(b)
            } else {
                Operand::r(b)
            };
            self.push(Inst::new(
                format!("{p}ADD{sfx}"),
                vec![Operand::r(d), Operand::r(a), bo],
                vec![0],
            ));
            return Ok(());
        }
        if mods.len() != 1 || matches!(ty, Ty::Pred | Ty::F64) {
            return Err(unsupported(
                node,
                "this add/sub form (saturation, carry, f64)",
            ));
        }
        let w = ty.words();
        let d = self.dst(&ops[0], w)?;
        let a = self.reg_src(&ops[1], w)?;
        let b = self.reg_src(&ops[2], w)?;
        let bo = |r: Reg| {
            if is_sub {
                Operand::neg(r)
            } else {
                Operand::r(r)
            }
        };
        if w == 1 {
            self.push(Inst::new(
                "IADD3",
                vec![Operand::r(d), Operand::r(a), bo(b), Operand::rz()],
                vec![0],
            ));
        } else {
            let p = self.ptmp();
            let pr = Reg::v(p, 1);
            self.push(Inst::new(
                "IADD3",
                vec![
                    Operand::r(sub(d, 0)),
                    Operand::r(pr),
                    Operand::r(sub(a, 0)),
                    bo(sub(b, 0)),
                    Operand::rz(),
                ],
                vec![0, 1],
            ));
            let hi_b = if is_sub {
                Operand::not(sub(b, 1))
            } else {
                Operand::r(sub(b, 1))
            };
            self.push(Inst::new(
                "IADD3.X",
                vec![
                    Operand::r(sub(d, 1)),
                    Operand::r(sub(a, 1)),
                    hi_b,
                    Operand::rz(),
                    Operand::r(pr),
                    Operand::not(Reg::Zero(Class::P)),
                ],
                vec![0],
            ));
        }
        Ok(())
    }

    fn mul(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 3)?;
        let ty = Self::ty_of(node, mods)?;
        if let Some((p, w)) = float_kind(ty) {
            let sfx = float_suffix(node, &mods[..mods.len() - 1], true)?;
            let d = self.dst(&ops[0], w)?;
            let a = self.reg_src(&ops[1], w)?;
            let b = self.reg_src(&ops[2], w)?;
            self.push(Inst::new(
                format!("{p}MUL{sfx}"),
                vec![Operand::r(d), Operand::r(a), Operand::r(b)],
                vec![0],
            ));
            return Ok(());
        }
        let mode = mods.first().map(String::as_str).unwrap_or("");
        if ty.words() == 2 && mode == ".lo" && mods.len() == 2 {
            // 64-bit low product: lo(a)*lo(b) as a wide product, plus the two cross
            // products' low words in the high word.
            let a = self.reg_src(&ops[1], 2)?;
            let b = self.reg_src(&ops[2], 2)?;
            return self.mul_lo64(&ops[0], a, b, None);
        }
        if ty.words() == 2 && mode == ".hi" && mods.len() == 2 {
            let a = self.reg_src(&ops[1], 2)?;
            let b = self.reg_src(&ops[2], 2)?;
            let hi = self.mul_hi64(a, b, ty.signed());
            let d = self.dst(&ops[0], 2)?;
            self.copy_words(d, hi, 2);
            return Ok(());
        }
        if ty.words() != 1 || mods.len() != 2 {
            return Err(unsupported(node, "this mul form"));
        }
        let a = self.reg_src(&ops[1], 1)?;
        let b = self.reg_src(&ops[2], 1)?;
        self.mul32(node, &ops[0], mode, ty, a, b)
    }

    /// The high 64 bits of the 128-bit product of 64-bit `a` and `b`, as ptxas 13.0.88 computes
    /// `mul.hi.u64` (sm_80, sm_90): with a = a1:a0, b = b1:b0, the cross products
    /// `m = a0·b1 + a1·b0` (65 bits: `IMAD.WIDE.U32` with a carry-out, the carry kept by
    /// `IMAD.X`), the carry of `hi(a0·b0) + lo(m)` (`IADD3 RZ, P, ...`), then
    /// `a1·b1 + hi(m) + carry` (`IMAD.WIDE.U32.X`). `mul.hi.s64` subtracts `a` when `b` is
    /// negative and `b` when `a` is (two `SEL`s of a 64-bit subtraction).
    fn mul_hi64(&mut self, a: Reg, b: Reg, signed: bool) -> VReg {
        let p = |cx: &mut Cx| Reg::v(cx.ptmp(), 1);
        let t = self.tmp(2);
        self.imad_wide(Reg::v(t, 2), sub(a, 1), sub(b, 0), false, None);
        let m = self.tmp(2);
        let c0 = p(self);
        self.push(Inst::new(
            "IMAD.WIDE.U32",
            vec![
                Operand::r(Reg::v(m, 2)),
                Operand::r(c0),
                Operand::r(sub(a, 0)),
                Operand::r(sub(b, 1)),
                Operand::r(Reg::v(t, 2)),
            ],
            vec![0, 1],
        ));
        // x = hi(m) : carry of m.
        let x = self.tmp(2);
        self.push(Inst::new(
            "IMAD.X",
            vec![
                Operand::r(Reg::part(x, 1)),
                Operand::rz(),
                Operand::rz(),
                Operand::rz(),
                Operand::r(c0),
            ],
            vec![0],
        ));
        self.push(Inst::new(
            "MOV",
            vec![Operand::r(Reg::part(x, 0)), Operand::r(Reg::part(m, 1))],
            vec![0],
        ));
        let lo = self.tmp(2);
        self.imad_wide(Reg::v(lo, 2), sub(a, 0), sub(b, 0), false, None);
        let c1 = p(self);
        self.push(Inst::new(
            "IADD3",
            vec![
                Operand::rz(),
                Operand::r(c1),
                Operand::r(Reg::part(lo, 1)),
                Operand::r(Reg::part(m, 0)),
                Operand::rz(),
            ],
            vec![1],
        ));
        let hi = self.tmp(2);
        self.push(Inst::new(
            "IMAD.WIDE.U32.X",
            vec![
                Operand::r(Reg::v(hi, 2)),
                Operand::r(sub(a, 1)),
                Operand::r(sub(b, 1)),
                Operand::r(Reg::v(x, 2)),
                Operand::r(c1),
            ],
            vec![0],
        ));
        if !signed {
            return hi;
        }
        // hi - a when b < 0, then - b when a < 0.
        let mut r = hi;
        for (neg_if, minus) in [(b, a), (a, b)] {
            let negative = p(self);
            self.push(Inst::new(
                "ISETP.LT.AND",
                vec![
                    Operand::r(negative),
                    Operand::pt(),
                    Operand::r(sub(neg_if, 1)),
                    Operand::rz(),
                    Operand::pt(),
                ],
                vec![0],
            ));
            let diff = self.tmp(2);
            self.add64(
                [Reg::part(diff, 0), Reg::part(diff, 1)],
                [Operand::neg(sub(minus, 0)), Operand::not(sub(minus, 1))],
                [Operand::r(Reg::part(r, 0)), Operand::r(Reg::part(r, 1))],
            );
            let next = self.tmp(2);
            for k in 0..2 {
                self.push(Inst::new(
                    "SEL",
                    vec![
                        Operand::r(Reg::part(next, k)),
                        Operand::r(Reg::part(diff, k)),
                        Operand::r(Reg::part(r, k)),
                        Operand::r(negative),
                    ],
                    vec![0],
                ));
            }
            r = next;
        }
        r
    }

    /// `d = a * b (+ c)`, the low 64 bits of 64-bit operands: lo(a)*lo(b) (+ c) as a wide
    /// product, plus the two cross products' low words in the high word.
    fn mul_lo64(
        &mut self,
        d: &ast::Operand,
        a: Reg,
        b: Reg,
        c: Option<Reg>,
    ) -> Result<(), LowerError> {
        {
            let w = self.tmp(2);
            self.imad_wide(Reg::v(w, 2), sub(a, 0), sub(b, 0), false, c);
            let c1 = self.tmp(2);
            self.imad_wide(Reg::v(c1, 2), sub(a, 0), sub(b, 1), false, None);
            let c2 = self.tmp(2);
            self.imad_wide(Reg::v(c2, 2), sub(a, 1), sub(b, 0), false, None);
            let hi = Reg::v(self.tmp(1), 1);
            self.push(Inst::new(
                "IADD3",
                vec![
                    Operand::r(hi),
                    Operand::r(Reg::part(w, 1)),
                    Operand::r(Reg::part(c1, 0)),
                    Operand::r(Reg::part(c2, 0)),
                ],
                vec![0],
            ));
            let d = self.dst(d, 2)?;
            self.push(Inst::new(
                "MOV",
                vec![Operand::r(sub(d, 0)), Operand::r(Reg::part(w, 0))],
                vec![0],
            ));
            self.push(Inst::new(
                "MOV",
                vec![Operand::r(sub(d, 1)), Operand::r(hi)],
                vec![0],
            ));
            Ok(())
        }
    }

    /// 32-bit integer `mul.lo/.wide/.hi`.
    fn mul32(
        &mut self,
        node: &SyntaxNode,
        d_op: &ast::Operand,
        mode: &str,
        ty: Ty,
        a: Reg,
        b: Reg,
    ) -> Result<(), LowerError> {
        let ops = [d_op.clone()];
        match mode {
            ".lo" => {
                let d = self.dst(&ops[0], 1)?;
                self.push(Inst::new(
                    "IMAD",
                    vec![Operand::r(d), Operand::r(a), Operand::r(b), Operand::rz()],
                    vec![0],
                ));
                Ok(())
            }
            ".wide" => {
                let d = self.dst(&ops[0], 2)?;
                self.imad_wide(d, a, b, ty.signed(), None);
                Ok(())
            }
            ".hi" => {
                let d = self.dst(&ops[0], 1)?;
                self.push(Inst::new(
                    if ty.signed() {
                        "IMAD.HI"
                    } else {
                        "IMAD.HI.U32"
                    },
                    vec![Operand::r(d), Operand::r(a), Operand::r(b), Operand::rz()],
                    vec![0],
                ));
                Ok(())
            }
            _ => Err(unsupported(node, format!("mul{mode} of {ty:?}"))),
        }
    }

    /// `d = a + b` on 64-bit values given as (low, high) operands, as ptxas adds them:
    /// `IADD3 d.lo, P, a.lo, b.lo, RZ` and `IADD3.X d.hi, a.hi, b.hi, RZ, P, !PT`. A negated
    /// low and inverted high word of `b` subtract it.
    pub(crate) fn add64(&mut self, d: [Reg; 2], a: [Operand; 2], b: [Operand; 2]) {
        let [alo, ahi] = a;
        let [blo, bhi] = b;
        let carry = Reg::v(self.ptmp(), 1);
        self.push(Inst::new(
            "IADD3",
            vec![Operand::r(d[0]), Operand::r(carry), alo, blo, Operand::rz()],
            vec![0, 1],
        ));
        self.push(Inst::new(
            "IADD3.X",
            vec![
                Operand::r(d[1]),
                ahi,
                bhi,
                Operand::rz(),
                Operand::r(carry),
                Operand::not(Reg::Zero(Class::P)),
            ],
            vec![0],
        ));
    }

    fn imad_wide(&mut self, d: Reg, a: Reg, b: Reg, signed: bool, c: Option<Reg>) {
        let op = if signed { "IMAD.WIDE" } else { "IMAD.WIDE.U32" };
        let c = c.map_or(Operand::rz(), Operand::r);
        self.push(Inst::new(
            op,
            vec![Operand::r(d), Operand::r(a), Operand::r(b), c],
            vec![0],
        ));
    }

    fn mad(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 4)?;
        let ty = Self::ty_of(node, mods)?;
        if float_kind(ty).is_some() {
            let rounding = mods
                .iter()
                .any(|m| matches!(m.as_str(), ".rn" | ".rz" | ".rm" | ".rp"));
            if !rounding {
                // `mad.f32` without a rounding modifier (PTX for sm_1x): ptxas compiles it
                // to FFMA, i.e. fma.rn.
                let mut with_rn = vec![".rn".to_string()];
                with_rn.extend(mods.iter().cloned());
                return self.ffma(node, &with_rn, ops);
            }
            return self.ffma(node, mods, ops);
        }
        let mode = mods.first().map(String::as_str).unwrap_or("");
        if ty.words() == 2 && mode == ".lo" && mods.len() == 2 {
            let a = self.reg_src(&ops[1], 2)?;
            let b = self.reg_src(&ops[2], 2)?;
            let c = self.reg_src(&ops[3], 2)?;
            return self.mul_lo64(&ops[0], a, b, Some(c));
        }
        if ty.words() != 1 || mods.len() != 2 {
            return Err(unsupported(node, "this mad form"));
        }
        let a = self.reg_src(&ops[1], 1)?;
        let b = self.reg_src(&ops[2], 1)?;
        match mode {
            ".lo" => {
                let c = self.reg_src(&ops[3], 1)?;
                let d = self.dst(&ops[0], 1)?;
                self.push(Inst::new(
                    "IMAD",
                    vec![Operand::r(d), Operand::r(a), Operand::r(b), Operand::r(c)],
                    vec![0],
                ));
                Ok(())
            }
            ".wide" => {
                let c = self.reg_src(&ops[3], 2)?;
                let d = self.dst(&ops[0], 2)?;
                self.imad_wide(d, a, b, ty.signed(), Some(c));
                Ok(())
            }
            _ => Err(unsupported(node, format!("mad{mode} of {ty:?}"))),
        }
    }

    fn ffma(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 4)?;
        let ty = Self::ty_of(node, mods)?;
        let (p, w) = float_kind(ty).ok_or_else(|| unsupported(node, "fma of this type"))?;
        let sfx = float_suffix(node, &mods[..mods.len() - 1], true)?;
        let d = self.dst(&ops[0], w)?;
        let a = self.reg_src(&ops[1], w)?;
        let b = self.reg_src(&ops[2], w)?;
        let c = self.reg_src(&ops[3], w)?;
        self.push(Inst::new(
            format!("{p}FMA{sfx}"),
            vec![Operand::r(d), Operand::r(a), Operand::r(b), Operand::r(c)],
            vec![0],
        ));
        Ok(())
    }

    fn shift(
        &mut self,
        node: &SyntaxNode,
        left: bool,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 3)?;
        let ty = Self::ty_of(node, mods)?;
        if ty == Ty::F32 || ty == Ty::Pred || ty == Ty::F64 {
            return Err(unsupported(node, "shift type"));
        }
        let w = ty.words();
        let d = self.dst(&ops[0], w)?;
        let a = self.reg_src(&ops[1], w)?;
        if w == 1 {
            let s = self.reg_src(&ops[2], 1)?;
            // SHF clamps the shift amount to 32 like PTX's shl/shr.
            let inst = if left {
                Inst::new(
                    "SHF.L.U32",
                    vec![Operand::r(d), Operand::r(a), Operand::r(s), Operand::rz()],
                    vec![0],
                )
            } else {
                let op = if ty.signed() {
                    "SHF.R.S32.HI"
                } else {
                    "SHF.R.U32.HI"
                };
                Inst::new(
                    op,
                    vec![Operand::r(d), Operand::rz(), Operand::r(s), Operand::r(a)],
                    vec![0],
                )
            };
            self.push(inst);
            return Ok(());
        }
        // 64-bit shifts: ptxas's funnel-shift pairs (`SHF.L.U64.HI` + `SHF.L.U32`,
        // `SHF.R.U64`/`.S64` + `SHF.R.U32.HI`/`.S32.HI`), which clamp the amount like PTX
        // (64 or more gives 0 or all sign bits; ptxas uses the same pair for register amounts).
        let s = match ops[2].as_int() {
            Some(k) => {
                let s = self.tmp(1);
                self.mov_imm(Reg::v(s, 1), k.clamp(0, 64) as u32);
                Reg::v(s, 1)
            }
            None => self.reg_src(&ops[2], 1)?,
        };
        // Write into a temporary pair: the two halves read both source words.
        let t = self.tmp(2);
        let (lo, hi) = (Reg::part(t, 0), Reg::part(t, 1));
        if left {
            self.push(Inst::new(
                "SHF.L.U64.HI",
                vec![
                    Operand::r(hi),
                    Operand::r(sub(a, 0)),
                    Operand::r(s),
                    Operand::r(sub(a, 1)),
                ],
                vec![0],
            ));
            self.push(Inst::new(
                "SHF.L.U32",
                vec![
                    Operand::r(lo),
                    Operand::r(sub(a, 0)),
                    Operand::r(s),
                    Operand::rz(),
                ],
                vec![0],
            ));
        } else {
            self.push(Inst::new(
                if ty.signed() {
                    "SHF.R.S64"
                } else {
                    "SHF.R.U64"
                },
                vec![
                    Operand::r(lo),
                    Operand::r(sub(a, 0)),
                    Operand::r(s),
                    Operand::r(sub(a, 1)),
                ],
                vec![0],
            ));
            let op = if ty.signed() {
                "SHF.R.S32.HI"
            } else {
                "SHF.R.U32.HI"
            };
            self.push(Inst::new(
                op,
                vec![
                    Operand::r(hi),
                    Operand::rz(),
                    Operand::r(s),
                    Operand::r(sub(a, 1)),
                ],
                vec![0],
            ));
        }
        for k in 0..2 {
            self.push(Inst::new(
                "MOV",
                vec![Operand::r(sub(d, k)), Operand::r(Reg::part(t, k))],
                vec![0],
            ));
        }
        Ok(())
    }

    /// `setp`; with `dst`, the result goes to that predicate instead of `ops[0]` (`set`).
    fn setp(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
        dst: Option<Reg>,
    ) -> Result<(), LowerError> {
        // `setp.cmp.xor`: the comparison, then `PLOP3.LUT d, PT, t, c, PT, 0x3c` (t ^ c; 0xc3
        // for `!c`). ptxas writes `ISETP.*.XOR` with the predicate folded in, a form the
        // learned tables do not know yet (it never occurs in the corpus).
        if ops.len() == 4 && mods.iter().any(|m| m == ".xor") {
            let inner: Vec<String> = mods.iter().filter(|m| *m != ".xor").cloned().collect();
            let t = Reg::v(self.ptmp(), 1);
            self.setp(node, &inner, &ops[..3], Some(t))?;
            let d = match dst {
                Some(p) => p,
                None => self.pred_dst(&ops[0])?,
            };
            let (c, lut) = match self.pred_src(&ops[3])? {
                Operand::Reg { reg, not: true, .. } => (reg, 0xc3),
                Operand::Reg { reg, .. } => (reg, 0x3c),
                _ => return Err(unsupported(node, "setp.xor with this combining operand")),
            };
            self.push(Inst::new(
                "PLOP3.LUT",
                vec![
                    Operand::r(d),
                    Operand::pt(),
                    Operand::r(t),
                    Operand::r(c),
                    Operand::pt(),
                    Operand::Hex(lut),
                    Operand::Hex(0),
                ],
                vec![0],
            ));
            return Ok(());
        }
        // `setp.cmp[.bool].type p, a, b[, {!}c]`: the combining predicate is ISETP's last
        // source with the bool op in the mnemonic (`ISETP.LT.OR P0, PT, R1, R2, P1`).
        let (bool_op, mods): (&str, Vec<String>) = {
            let b = mods
                .iter()
                .find(|m| matches!(m.as_str(), ".and" | ".or" | ".xor"));
            let op = match b.map(String::as_str) {
                Some(".and") => "AND",
                Some(".or") => "OR",
                Some(".xor") => "XOR",
                _ => "",
            };
            let rest = mods
                .iter()
                .filter(|m| !matches!(m.as_str(), ".and" | ".or" | ".xor"))
                .cloned()
                .collect();
            (op, rest)
        };
        let mods = &mods[..];
        let combine = match (ops.len(), bool_op) {
            (3, "") => Operand::pt(),
            (4, op) if !op.is_empty() => self.pred_src(&ops[3])?,
            _ => {
                return Err(unsupported(node, "setp with a second destination"));
            }
        };
        let bool_op = if bool_op.is_empty() { "AND" } else { bool_op };
        let ty = Self::ty_of(node, mods)?;
        let cmp = mods.first().map(String::as_str).unwrap_or("");
        let p = match dst {
            Some(p) => p,
            None => self.pred_dst(&ops[0])?,
        };
        if let Some((fp, w)) = float_kind(ty) {
            let sfx = float_suffix(node, &mods[1..mods.len() - 1], false)?;
            let c = match cmp {
                ".eq" => "EQ",
                ".ne" => "NE",
                ".lt" => "LT",
                ".le" => "LE",
                ".gt" => "GT",
                ".ge" => "GE",
                ".equ" => "EQU",
                ".neu" => "NEU",
                ".ltu" => "LTU",
                ".leu" => "LEU",
                ".gtu" => "GTU",
                ".geu" => "GEU",
                ".num" => "NUM",
                ".nan" => "NAN",
                other => return Err(unsupported(node, format!("setp comparison {other}"))),
            };
            let a = self.reg_src(&ops[1], w)?;
            let b = self.reg_src(&ops[2], w)?;
            self.push(Inst::new(
                format!("{fp}SETP.{c}{sfx}.{bool_op}"),
                vec![
                    Operand::r(p),
                    Operand::pt(),
                    Operand::r(a),
                    Operand::r(b),
                    combine,
                ],
                vec![0],
            ));
            return Ok(());
        }
        if mods.len() != 2 || ty == Ty::Pred || ty == Ty::F64 {
            return Err(unsupported(node, "this setp form"));
        }
        let unsigned = matches!(
            ty,
            Ty::U32 | Ty::B32 | Ty::U64 | Ty::B64 | Ty::U16 | Ty::B16
        );
        let c = match cmp {
            ".eq" => "EQ",
            ".ne" => "NE",
            ".lt" | ".lo" => "LT",
            ".le" | ".ls" => "LE",
            ".gt" | ".hi" => "GT",
            ".ge" | ".hs" => "GE",
            other => return Err(unsupported(node, format!("setp comparison {other}"))),
        };
        let unsigned = unsigned || matches!(cmp, ".lo" | ".ls" | ".hi" | ".hs");
        if ty.words() == 2 {
            // ptxas's pair: the low words unsigned, then the high words with `.EX` chained
            // on the low result (`ISETP.GE.U32.AND P0 ..; ISETP.GE.AND.EX P0 .., P0`).
            if ops.len() == 4 {
                return Err(unsupported(node, "64-bit setp with a combining predicate"));
            }
            let a = self.reg_src(&ops[1], 2)?;
            let b = self.reg_src(&ops[2], 2)?;
            let lo = Reg::v(self.ptmp(), 1);
            self.push(Inst::new(
                format!("ISETP.{c}.U32.AND"),
                vec![
                    Operand::r(lo),
                    Operand::pt(),
                    Operand::r(sub(a, 0)),
                    Operand::r(sub(b, 0)),
                    Operand::pt(),
                ],
                vec![0],
            ));
            self.push(Inst::new(
                format!("ISETP.{c}{}.AND.EX", if unsigned { ".U32" } else { "" }),
                vec![
                    Operand::r(p),
                    Operand::pt(),
                    Operand::r(sub(a, 1)),
                    Operand::r(sub(b, 1)),
                    Operand::pt(),
                    Operand::r(lo),
                ],
                vec![0],
            ));
            return Ok(());
        }
        let mut a = self.reg_src(&ops[1], 1)?;
        let mut b = self.reg_src(&ops[2], 1)?;
        if matches!(ty, Ty::U16 | Ty::S16 | Ty::B16) {
            // 16-bit registers carry unspecified upper bits (`small.rs`).
            a = self.extend_small(a, 16, ty == Ty::S16);
            b = self.extend_small(b, 16, ty == Ty::S16);
        }
        let op = format!("ISETP.{c}{}.{bool_op}", if unsigned { ".U32" } else { "" });
        self.push(Inst::new(
            op,
            vec![
                Operand::r(p),
                Operand::pt(),
                Operand::r(a),
                Operand::r(b),
                combine,
            ],
            vec![0],
        ));
        Ok(())
    }

    fn min_max(
        &mut self,
        node: &SyntaxNode,
        min: bool,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 3)?;
        let ty = Self::ty_of(node, mods)?;
        if matches!(ty, Ty::S64 | Ty::U64) && mods.len() == 1 {
            // ptxas's form: the 64-bit comparison (low words unsigned, high words `.EX`
            // chained), then `SEL` of each word.
            let a = self.reg_src(&ops[1], 2)?;
            let b = self.reg_src(&ops[2], 2)?;
            let c = if min { "LT" } else { "GT" };
            let hi = if ty == Ty::U64 { ".U32" } else { "" };
            let lo_p = Reg::v(self.ptmp(), 1);
            let p = Reg::v(self.ptmp(), 1);
            self.push(Inst::new(
                format!("ISETP.{c}.U32.AND"),
                vec![
                    Operand::r(lo_p),
                    Operand::pt(),
                    Operand::r(sub(a, 0)),
                    Operand::r(sub(b, 0)),
                    Operand::pt(),
                ],
                vec![0],
            ));
            self.push(Inst::new(
                format!("ISETP.{c}{hi}.AND.EX"),
                vec![
                    Operand::r(p),
                    Operand::pt(),
                    Operand::r(sub(a, 1)),
                    Operand::r(sub(b, 1)),
                    Operand::pt(),
                    Operand::r(lo_p),
                ],
                vec![0],
            ));
            let t = self.tmp(2);
            for k in 0..2 {
                self.push(Inst::new(
                    "SEL",
                    vec![
                        Operand::r(Reg::part(t, k)),
                        Operand::r(sub(a, k)),
                        Operand::r(sub(b, k)),
                        Operand::r(p),
                    ],
                    vec![0],
                ));
            }
            let d = self.dst(&ops[0], 2)?;
            self.copy_words(d, t, 2);
            return Ok(());
        }
        if ty == Ty::F64 && mods.len() == 1 {
            // ptxas's form: `DSETP.MAX/MIN` gives the selection (first predicate) and whether
            // the result is a NaN (second); the words are selected with `FSEL`/`SEL`, and a
            // NaN result is `b`'s high word quieted (`| 0x80000`).
            let a = self.reg_src(&ops[1], 2)?;
            let b = self.reg_src(&ops[2], 2)?;
            let (p, q) = (Reg::v(self.ptmp(), 1), Reg::v(self.ptmp(), 1));
            self.push(Inst::new(
                if min {
                    "DSETP.MIN.AND"
                } else {
                    "DSETP.MAX.AND"
                },
                vec![
                    Operand::r(p),
                    Operand::r(q),
                    Operand::r(a),
                    Operand::r(b),
                    Operand::pt(),
                ],
                vec![0, 1],
            ));
            let t = self.tmp(2);
            let (lo, hi) = (Reg::part(t, 0), Reg::part(t, 1));
            self.push(Inst::new(
                "FSEL",
                vec![
                    Operand::r(hi),
                    Operand::r(sub(a, 1)),
                    Operand::r(sub(b, 1)),
                    Operand::r(p),
                ],
                vec![0],
            ));
            self.push(Inst::new(
                "SEL",
                vec![
                    Operand::r(lo),
                    Operand::r(sub(a, 0)),
                    Operand::r(sub(b, 0)),
                    Operand::r(p),
                ],
                vec![0],
            ));
            let mut quiet = Inst::new(
                "LOP3.LUT",
                vec![
                    Operand::r(hi),
                    Operand::r(sub(b, 1)),
                    Operand::Imm(0x80000),
                    Operand::rz(),
                    Operand::Hex(0xfc),
                    Operand::not(Reg::Zero(Class::P)),
                ],
                vec![0],
            );
            quiet.guard = Some(Guard {
                pred: q,
                negated: false,
            });
            self.push(quiet);
            let d = self.dst(&ops[0], 2)?;
            self.copy_words(d, t, 2);
            return Ok(());
        }
        let sel = if min {
            Operand::pt()
        } else {
            Operand::not(Reg::Zero(Class::P))
        };
        let op = match ty {
            Ty::F32 if mods.len() == 1 => "FMNMX".to_string(),
            // sm_90 has VIMNMX where sm_80 has IMNMX (ptxas's forms; PT selects the minimum).
            Ty::S32 | Ty::U32 if mods.len() == 1 => {
                let base = if self.target.forms.vimnmx {
                    "VIMNMX"
                } else {
                    "IMNMX"
                };
                if ty == Ty::U32 {
                    format!("{base}.U32")
                } else {
                    base.to_string()
                }
            }
            _ => return Err(unsupported(node, "this min/max form")),
        };
        let d = self.dst(&ops[0], 1)?;
        let a = self.reg_src(&ops[1], 1)?;
        let b = self.reg_src(&ops[2], 1)?;
        self.push(Inst::new(
            op,
            vec![Operand::r(d), Operand::r(a), Operand::r(b), sel],
            vec![0],
        ));
        Ok(())
    }

    fn cvt(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 2)?;
        let types: Vec<&String> = mods
            .iter()
            .filter(|m| ast::TYPES.contains(&m.as_str()))
            .collect();
        let rest: Vec<&String> = mods
            .iter()
            .filter(|m| !ast::TYPES.contains(&m.as_str()))
            .collect();
        if types.len() != 2 {
            return Err(malformed(node, "cvt needs two types"));
        }
        let (Some(dt), Some(st)) = (Ty::parse(types[0]), Ty::parse(types[1])) else {
            if self.cvt_from_table(node, mods, ops)? {
                return Ok(());
            }
            return Err(unsupported(node, format!("cvt{}{}", types[0], types[1])));
        };
        let rest: Vec<&str> = rest.iter().map(|s| s.as_str()).collect();
        let int = |t: Ty| matches!(t, Ty::U32 | Ty::S32 | Ty::B32 | Ty::U64 | Ty::S64 | Ty::B64);
        let i2fp = self.target.forms.i2fp;
        if int(dt) && int(st) && rest.is_empty() {
            let d = self.dst(&ops[0], dt.words())?;
            // PTX lets cvt's source register be wider than its type (`cvt.s64.s32 %rd2,
            // %rd1;`): the low word is the value.
            let a = if st.words() == 1 && self.reg_width(&ops[1]) == Some(2) {
                sub(self.reg_src(&ops[1], 2)?, 0)
            } else {
                self.reg_src(&ops[1], st.words())?
            };
            match (dt.words(), st.words()) {
                (1, 1) => self.push(Inst::new(
                    "MOV",
                    vec![Operand::r(d), Operand::r(a)],
                    vec![0],
                )),
                (1, 2) => self.push(Inst::new(
                    "MOV",
                    vec![Operand::r(d), Operand::r(sub(a, 0))],
                    vec![0],
                )),
                (2, 1) => {
                    // Write the high word first: `d` may not overlap `a` (different vregs).
                    if st.signed() {
                        let s = self.tmp(1);
                        self.mov_imm(Reg::v(s, 1), 31);
                        self.push(Inst::new(
                            "SHF.R.S32.HI",
                            vec![
                                Operand::r(sub(d, 1)),
                                Operand::rz(),
                                Operand::r(Reg::v(s, 1)),
                                Operand::r(a),
                            ],
                            vec![0],
                        ));
                    } else {
                        self.mov_imm(sub(d, 1), 0);
                    }
                    self.push(Inst::new(
                        "MOV",
                        vec![Operand::r(sub(d, 0)), Operand::r(a)],
                        vec![0],
                    ));
                }
                _ => {
                    for k in 0..2 {
                        self.push(Inst::new(
                            "MOV",
                            vec![Operand::r(sub(d, k)), Operand::r(sub(a, k))],
                            vec![0],
                        ));
                    }
                }
            }
            return Ok(());
        }
        if dt == Ty::F32 && matches!(st, Ty::S32 | Ty::U32) && rest == [".rn"] {
            let d = self.dst(&ops[0], 1)?;
            let a = self.reg_src(&ops[1], 1)?;
            let op = match (i2fp, st == Ty::U32) {
                (false, false) => "I2F",
                (false, true) => "I2F.U32",
                (true, false) => "I2FP.F32.S32",
                (true, true) => "I2FP.F32.U32",
            };
            self.push(Inst::new(op, vec![Operand::r(d), Operand::r(a)], vec![0]));
            return Ok(());
        }
        if dt == Ty::F64 && matches!(st, Ty::S32 | Ty::U32) && rest == [".rn"] {
            let d = self.dst(&ops[0], 2)?;
            let a = self.reg_src(&ops[1], 1)?;
            let op = if st == Ty::U32 {
                "I2F.F64.U32"
            } else {
                "I2F.F64"
            };
            self.push(Inst::new(op, vec![Operand::r(d), Operand::r(a)], vec![0]));
            return Ok(());
        }
        if matches!(dt, Ty::S32 | Ty::U32) && st == Ty::F64 && rest == [".rzi"] {
            let d = self.dst(&ops[0], 1)?;
            let a = self.reg_src(&ops[1], 2)?;
            let op = if dt == Ty::U32 {
                "F2I.U32.F64.TRUNC"
            } else {
                "F2I.F64.TRUNC"
            };
            self.push(Inst::new(op, vec![Operand::r(d), Operand::r(a)], vec![0]));
            return Ok(());
        }
        if dt == Ty::F32 && st == Ty::F64 && rest == [".rn"] {
            let d = self.dst(&ops[0], 1)?;
            let a = self.reg_src(&ops[1], 2)?;
            self.push(Inst::new(
                "F2F.F32.F64",
                vec![Operand::r(d), Operand::r(a)],
                vec![0],
            ));
            return Ok(());
        }
        if matches!(dt, Ty::S32 | Ty::U32) && st == Ty::F32 && rest == [".rzi"] {
            let d = self.dst(&ops[0], 1)?;
            let a = self.reg_src(&ops[1], 1)?;
            let op = if dt == Ty::U32 {
                "F2I.U32.TRUNC.NTZ"
            } else {
                "F2I.TRUNC.NTZ"
            };
            self.push(Inst::new(op, vec![Operand::r(d), Operand::r(a)], vec![0]));
            return Ok(());
        }
        if self.cvt_from_table(node, mods, ops)? {
            return Ok(());
        }
        Err(unsupported(
            node,
            format!("cvt{}{}{}", rest.concat(), types[0], types[1]),
        ))
    }
}

/// The SASS prefix (`F`, `D`) and register width of a float type.
fn float_kind(ty: Ty) -> Option<(&'static str, u8)> {
    match ty {
        Ty::F32 => Some(("F", 1)),
        Ty::F64 => Some(("D", 2)),
        _ => None,
    }
}

/// Component `k` of a (possibly wide) register reference.
fn sub(r: Reg, k: u8) -> Reg {
    match r {
        Reg::Virt { vreg, part, .. } => Reg::Virt {
            vreg,
            part: part + k,
            width: 1,
        },
        Reg::Phys { class, index, .. } => Reg::Phys {
            class,
            index: index + k,
            width: 1,
        },
        Reg::Zero(c) => Reg::Zero(c),
    }
}
