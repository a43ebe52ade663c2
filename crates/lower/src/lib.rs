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

mod arith;
mod atom;
mod atom_sub;
mod bitfield;
mod bits;
mod call;
mod carry;
mod compare;
mod convert;
mod cp_async;
mod cvt_table;
mod cvta;
mod divrem;
mod fence;
mod fmath;
mod funnel;
mod half;
mod learned;
mod local;
mod mbarrier;
mod mbarrier_words;
mod memory;
mod mma;
mod modvar;
mod op_table;
pub use cvt_table::cvt_template_schedulable;
pub use op_table::disable_learned_ops;
mod operands;
mod param;
mod param_ptr;
mod rsmem;
mod select;
mod seq;
mod set;
mod shift;
mod small;
mod spelling;
mod surface;
mod syscall;
mod testp;
mod texture;
mod video_sel;
mod warp;
mod wmma;
mod wmma_mma;

pub use call::{Functions, direct_callees};
pub use rsmem::ReservedSmemUse;

use ir::{Block, Class, Func, Guard, Inst, Opcode, Operand, Reg, VReg, op};
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
    /// The alignment the frame keeps for its variables (a power of two, at least 8 when
    /// there is a frame): anything that grows the frame grows it by a multiple of this.
    pub frame_align: u32,
    /// Named barriers used: the highest barrier id + 1 (16 with an id in a register).
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

/// An opcode a lowering rule spells from parts (`ISETP.{cmp}.U32.AND`): one the SASS tables
/// do not have is an internal error reported at `node`, never an instruction.
fn sass_op(node: &SyntaxNode, text: &str) -> Result<Opcode, LowerError> {
    Opcode::parse(text).map_err(|e| LowerError {
        message: format!("internal: {e}"),
        range: node.text_range(),
        function: None,
    })
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

/// The PTX types lowering handles: a subset of [`ptx::Type`] (16-bit integers live in the low
/// half of a 32-bit register, `small.rs`).
use ptx::Type as Ty;

/// What lowering needs of a type beyond `ptx::Type`.
pub(crate) trait LoweredType: Sized {
    /// A type modifier lowering handles (`None` for the others: `unsupported`).
    fn lowered(s: &str) -> Option<Self>;
    /// 32-bit registers a value of the type takes.
    fn words(self) -> u8;
    fn signed(self) -> bool;
}

impl LoweredType for Ty {
    fn lowered(s: &str) -> Option<Ty> {
        use Ty::*;
        Ty::parse(s).filter(|t| {
            matches!(
                t,
                B32 | U32 | S32 | F32 | B64 | U64 | S64 | F64 | Pred | B16 | U16 | S16
            )
        })
    }
    fn words(self) -> u8 {
        if self.bits() > 32 { 2 } else { 1 }
    }
    fn signed(self) -> bool {
        self.is_signed()
    }
}

/// The float type an instruction's float literals (`0d...`, `1.5`) are converted to, as
/// ptxas 13.0.88 reads them: `add.f32 d, a, 0d3FF8...` adds 1.5 (`FADD R, R, 1.5`), a decimal
/// literal is a double rounded to the type; a `0f` literal's bits are used as they are, zero-
/// extended in an f64 instruction (`mov.f64 d, 0f3F800000` is `0x000000003f800000`). A `cvt`
/// or `set` takes its source type (the last type word).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FloatLiterals {
    /// No float type (`mov.b32 r, 0f3F800000` moves the bits).
    NoFloatType,
    F32,
    F64,
    /// Half types, or float types that differ: literals other than `0f` bits are refused.
    Other,
}

impl FloatLiterals {
    fn of(opcode: &str, mods: &[String]) -> FloatLiterals {
        let float = |m: &str| {
            matches!(
                m,
                ".f32"
                    | ".f64"
                    | ".f16"
                    | ".f16x2"
                    | ".bf16"
                    | ".bf16x2"
                    | ".tf32"
                    | ".e4m3x2"
                    | ".e5m2x2"
            )
        };
        let types: Vec<&str> = mods
            .iter()
            .map(String::as_str)
            .filter(|m| float(m))
            .collect();
        // `cvt.dtype.atype` and `set.cmp.dtype.stype`: the sources (the literals) are of the
        // last type.
        let ty = if matches!(opcode, "cvt" | "set") {
            mods.iter()
                .map(String::as_str)
                .rev()
                .find(|m| Ty::parse(m).is_some())
        } else if types.windows(2).all(|w| w[0] == w[1]) {
            types.first().copied()
        } else {
            return FloatLiterals::Other;
        };
        match ty {
            Some(".f32") => FloatLiterals::F32,
            Some(".f64") => FloatLiterals::F64,
            Some(t) if float(t) => FloatLiterals::Other,
            _ => FloatLiterals::NoFloatType,
        }
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
    /// Registers read with a short sequence (`operands.rs`: `%warpid`, `%gridid`, `%pm0`,
    /// the cluster registers, ...).
    Computed(operands::Computed),
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
    /// The float type the current instruction's float literals take (`operands.rs`).
    float_literals: FloatLiterals,
    /// The carry flag `CC.CF` of `add.cc`/`addc` and friends, a predicate made on first use
    /// (`carry.rs`).
    carry: Option<VReg>,
    /// Module-scope shared names on sm_90, refused where used.
    needs_shared_base: bool,
    /// `wmma`'s lane coordinates `(lane / 4, lane % 4)`, computed once in the entry block
    /// (`wmma.rs`).
    wmma_lane: Option<(Reg, Reg)>,
    /// CTA barriers the kernel uses (EIATTR_NUM_BARRIERS): the highest immediate id + 1, 16
    /// with an id in a register.
    num_barriers: u8,
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
        float_literals: FloatLiterals::NoFloatType,
        carry: None,
        needs_shared_base: false,
        wmma_lane: None,
        num_barriers: 0,
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
        cx.push(Inst::new(op!("EXIT"), vec![], vec![]));
    }
    cx.place_wmma_lane(entry);
    // The fixed registers the kernel sets up in its first block and keeps: set again after
    // every system call, which may change them (`syscall.rs`).
    let mut prologue: Vec<Inst> = Vec::new();
    if cx.needs_desc && cx.target.forms.memory_descriptor {
        let desc = cx.target.driver.global_desc;
        prologue.push(Inst::new(
            op!("ULDC.64"),
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
                op!("S2UR"),
                vec![Operand::r(cta), Operand::Special("SR_CgaCtaId")],
                vec![0],
            ),
            Inst::new(
                op!("UMOV"),
                vec![
                    Operand::r(base),
                    Operand::Imm(i64::from(target::RESERVED_SHARED_BYTES)),
                ],
                vec![0],
            ),
            Inst::new(
                op!("ULEA"),
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
    spelling::respell(&mut cx.f, cx.target.forms);
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
        num_barriers: cx.num_barriers,
        frame_size: cx.frame_size,
        frame_align: cx.frame_align.max(8),
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
            let op = if words == 2 {
                op!("LDC.64")
            } else {
                op!("LDC")
            };
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
                    op!("MOV"),
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
            t => Ty::lowered(t),
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
            self.push(Inst::new(op!("MOV"), vec![Operand::r(dst), base], vec![0]));
        } else {
            let t = Reg::v(self.tmp(1), 1);
            self.mov_imm(t, at);
            self.push(Inst::new(
                op!("IADD3"),
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
        self.push(Inst::new(op!("MOV"), vec![Operand::r(dst), src], vec![0]));
    }

    fn special(&mut self, dst: Reg, s: Sreg) {
        match s {
            Sreg::S2r(name) => self.push(Inst::new(
                op!("S2R"),
                vec![Operand::r(dst), Operand::Special(name)],
                vec![0],
            )),
            Sreg::Cbank(off) => self.const_load(Operand::r(dst), off, 1),
            Sreg::Clock { wide, timer } => self.push(Inst::new(
                if wide { op!("CS2R") } else { op!("CS2R.32") },
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
            Sreg::Computed(c) => self.computed_special(dst, c),
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
        self.float_literals = FloatLiterals::of(&opcode, &mods);
        let r = self.select_or_learned(node, &opcode, &mods, &ops);
        self.guard = None;
        self.origin = None;
        r
    }

    /// [`Cx::select`], and where its families refuse the instruction without having emitted
    /// anything, ptxas's learned code for it (`op_table.rs`).
    fn select_or_learned(
        &mut self,
        node: &SyntaxNode,
        opcode: &str,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        let (emitted, blocks, cur) = (self.emitted, self.f.order.len(), self.cur);
        match self.select(node, opcode, mods, ops) {
            Err(e)
                if self.emitted == emitted && self.f.order.len() == blocks && self.cur == cur =>
            {
                match self.op_from_table(opcode, mods, ops) {
                    Ok(true) => Ok(()),
                    // A video instruction's own reason (its selectors) says more than the
                    // families' "instruction `vadd`".
                    Err(table) if video_sel::video_lanes(opcode).is_some() => Err(table),
                    _ => Err(e),
                }
            }
            r => r,
        }
    }

    /// The single type modifier of an instruction (the last type word).
    fn ty_of(node: &SyntaxNode, mods: &[String]) -> Result<Ty, LowerError> {
        let t = mods
            .iter()
            .rev()
            .find(|m| ast::TYPES.contains(&m.as_str()))
            // The checker accepted the instruction, so its type is one lowering does not know
            // by name (`min.s16x2`): unsupported, not malformed.
            .ok_or_else(|| unsupported(node, "an instruction type kiln does not lower"))?;
        Ty::lowered(t).ok_or_else(|| unsupported(node, format!("type {t}")))
    }

    fn need(node: &SyntaxNode, ops: &[ast::Operand], n: usize) -> Result<(), LowerError> {
        if ops.len() == n {
            Ok(())
        } else {
            // The checker accepted the operand count, so this is a form lowering does not
            // cover (`cvt.rz.satfinite.f16x2.f32 d, a, b`): unsupported, not malformed.
            Err(unsupported(
                node,
                format!(
                    "this form with {} operands (kiln lowers the one with {n})",
                    ops.len()
                ),
            ))
        }
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
