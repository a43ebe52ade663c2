//! Loading a cubin the way the driver does: code sections placed in one code address space,
//! module globals allocated in [`Memory`], constant banks filled and relocated, every word
//! decoded into the structured [`Inst`] view. Undefined functions the constant banks point at
//! (the device runtime's `vprintf`, `__assertfail`, which the driver links) get addresses in
//! [`EXTERN_WINDOW`] that the emulator's `CALL.ABS.NOINC` recognises.

use std::collections::HashMap;
use std::sync::Arc;
use target::{DriverWords, Profile};

use cubin::builder::R_CUDA_TEX_HEADER_INDEX;
use cubin::eiattr::KparamInfo;
use cubin::model::{Cubin, SectionData};
use interp::Memory;
use sass::model::Inst;

/// The per-thread stack the CUDA driver provides when a kernel's stack size is not stated
/// (`cudaLimitStackSize`'s default, 1 KiB).
pub const DRIVER_DEFAULT_STACK: u32 = 1024;

/// ELF relocation type `R_CUDA_64`: a 64-bit absolute address (number confirmed against
/// `cuobjdump -elf`, which names type 2 `R_CUDA_64`; the cubin builder writes it too).
pub const R_CUDA_64: u32 = 2;

/// Code addresses as the program sees them: `LEPC` writes `CODE_WINDOW + pc` (pc: the
/// emulator's code address, [`Program::code`] index × 16), and a system call returns to the
/// instruction such an address names ([`Program::code_pc`]). The window lies outside every
/// memory window and allocation, so a code address used as data faults.
pub const CODE_WINDOW: u64 = 0x0008_0000_0000_0000;

/// Addresses of undefined functions: an `R_CUDA_64` relocation against an undefined function
/// symbol (`vprintf`, `__assertfail`, `cudaGraphSetConditional`, ...) gets
/// `EXTERN_WINDOW + 16 * i` for the module's i-th such symbol ([`Program::externs`]). Outside
/// every memory window and allocation and the code window: a call to one is recognised by
/// `CALL.ABS.NOINC`, any other use faults.
pub const EXTERN_WINDOW: u64 = 0x0009_0000_0000_0000;

/// STT_FUNC: the ELF symbol type of functions.
const STT_FUNC: u8 = 2;

/// One instruction slot of the code image.
#[derive(Debug, Clone)]
pub enum Slot {
    /// A decoded instruction (with its text for messages).
    Inst { inst: Inst, text: String },
    /// A word the decoding tables do not know (`.unknown 0x...`), or whose text the model
    /// cannot parse; executing it is an unsupported-instruction error.
    Unknown(String),
}

/// A code section placed at `base` in the code address space.
#[derive(Debug, Clone)]
pub struct CodeSection {
    pub name: String,
    pub base: u64,
    pub size: u64,
}

/// A kernel (`STO_CUDA_ENTRY` function) of the module.
#[derive(Debug, Clone)]
pub struct Kernel {
    pub name: String,
    /// Code address of the first instruction.
    pub entry: u64,
    /// `.nv.constant0.<name>`: the constant bank 0 image (driver area + parameters).
    pub cbank0: Vec<u8>,
    /// Parameters (EIATTR_KPARAM_INFO) by ordinal.
    pub params: Vec<KparamInfo>,
    /// Parameter block offset and size in bank 0 (EIATTR_PARAM_CBANK).
    pub param_block: (u32, u32),
    /// `.nv.shared.<name>` size (on sm_90 it includes the 1 KiB ptxas reserves at offset 0).
    pub shared_static: u64,
    /// Per-thread local memory bytes the driver gives this kernel (frame plus call stack).
    pub local_bytes: u64,
    /// Constant banks other than 0 private to this kernel (`.nv.constantN.<name>`).
    pub banks: HashMap<u32, Vec<u8>>,
}

/// A loaded module.
#[derive(Debug, Clone)]
pub struct Program {
    /// SM number from `e_flags` (80, 90, ...).
    pub sm: u32,
    /// Where the driver puts kernel parameters in bank 0.
    pub param_base: u32,
    /// The other words the driver fills in bank 0 (the SM's `target::Profile`).
    pub driver: DriverWords,
    /// Code slots by `address / 16`.
    pub code: Arc<Vec<Slot>>,
    pub sections: Vec<CodeSection>,
    pub kernels: Vec<Kernel>,
    /// Module-wide constant banks (`.nv.constant3`, `.nv.constant4`, ...), relocated.
    pub banks: HashMap<u32, Vec<u8>>,
    /// Relocations the loader could not apply: (section, type, symbol); reaching any code is
    /// then an unsupported error naming them (they may change instruction words).
    pub unapplied: Vec<String>,
    /// Undefined functions whose addresses the constant banks hold: the i-th has address
    /// `EXTERN_WINDOW + 16 * i`. Calling `vprintf` or `__assertfail` performs the system call
    /// (`crate::syscall`); calling any other is unsupported, naming it.
    pub externs: Vec<String>,
}

/// Why a cubin cannot be loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError(pub String);

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The bank number of a `.nv.constantN[.kernel]` section name.
fn bank_of(name: &str) -> Option<(u32, Option<&str>)> {
    let rest = name.strip_prefix(".nv.constant")?;
    let (num, kernel) = match rest.split_once('.') {
        Some((n, k)) => (n, Some(k)),
        None => (rest, None),
    };
    Some((num.parse().ok()?, kernel))
}

/// A decoded cubin, not yet placed in any memory: decode once, instantiate per run.
#[derive(Debug, Clone)]
pub struct Image {
    cubin: Cubin,
    sm: u32,
    code: Arc<Vec<Slot>>,
    sections: Vec<CodeSection>,
    /// Code address of each `.text.*` section, by section index.
    text_addr: HashMap<usize, u64>,
    /// Code relocations applied while decoding (text section, offset).
    code_relocs: Vec<(usize, u64)>,
}

/// Loads `bytes` (a cubin ptxas wrote): decodes the code, allocates the module's
/// `.nv.global` / `.nv.global.init` sections in `mem`, applies data relocations.
pub fn load(bytes: &[u8], mem: &mut Memory) -> Result<Program, LoadError> {
    decode(bytes)?.instantiate(mem)
}

/// Reads and decodes a cubin.
pub fn decode(bytes: &[u8]) -> Result<Image, LoadError> {
    let c = cubin::read(bytes).map_err(|e| LoadError(format!("not a valid cubin: {e}")))?;
    let sm = c.header.sm();
    let table = sass::table(&format!("sm_{sm}"))
        .ok_or_else(|| LoadError(format!("no SASS table for sm_{sm}")))?;
    let merged = crate::fallback::table(&format!("sm_{sm}"));
    let mut text_addr = HashMap::new();
    let mut sections = Vec::new();
    let mut code_words: Vec<(u64, Option<u128>)> = Vec::new();
    let mut next = 0u64;
    for (i, s) in c.sections.iter().enumerate() {
        if s.name.starts_with(".text.") {
            let data = section_bytes(&c, i);
            let base = next.div_ceil(128) * 128;
            text_addr.insert(i, base);
            // Gap between sections: slots that trap as unknown if ever reached.
            while (code_words.len() as u64) * 16 < base {
                code_words.push(((code_words.len() as u64) * 16, None));
            }
            for (k, w) in sass::words(&data).into_iter().enumerate() {
                code_words.push((base + 16 * k as u64, Some(w)));
            }
            sections.push(CodeSection {
                name: s.name.clone(),
                base,
                size: data.len() as u64,
            });
            next = base + data.len() as u64;
        }
    }
    let mut code = Vec::with_capacity(code_words.len());
    for (pc, w) in code_words {
        let Some(w) = w else {
            code.push(Slot::Unknown(format!("{pc:#x} lies between code sections")));
            continue;
        };
        let decoded = table
            .decode(w, pc)
            .or_else(|| merged.and_then(|m| m.decode(w, pc)));
        let slot = match decoded {
            // A word that prints like ptxas's but is another encoding ptxas never writes for
            // that text (`sass::prefer::Shadow`): its text does not say what it does.
            Some(d) if table.is_shadow(d.encoding) => Slot::Unknown(format!(
                "`{}` is encoded as {:#x}, a form that prints like ptxas's but that ptxas \
                 never writes (its hidden operands are not modelled)",
                d.text(&|t| Some(format!("{t:#x}"))),
                d.encoding.value & 0xfff
            )),
            Some(d) => match Inst::from_decoded(&d) {
                Ok(inst) => Slot::Inst {
                    text: d.text(&|t| Some(format!("{t:#x}"))),
                    inst,
                },
                Err(e) => Slot::Unknown(format!("unparsed instruction text: {e}")),
            },
            None => Slot::Unknown(format!(
                "undecoded word (opcode {:#05x}{}) {}",
                w & 0xfff,
                table
                    .candidates((w & 0xfff) as u16)
                    .next()
                    .map(|e| {
                        let t = &e.template;
                        let m = &t[..t.find([' ', '.']).unwrap_or(t.len())];
                        format!(", a {m} form")
                    })
                    .unwrap_or_default(),
                sass::unknown_text(w)
            )),
        };
        code.push(slot);
    }
    let code_relocs = apply_code_relocs(&c, &text_addr, &mut code);
    Ok(Image {
        cubin: c,
        sm,
        code: Arc::new(code),
        sections,
        text_addr,
        code_relocs,
    })
}

/// `R_CUDA_ABS32_LO_32` (56): the low 32 bits of an absolute address, in a 32-bit immediate
/// (`MOV R20, 32@lo((kernel + .L_x_0@srel))`). Numbers and names as `cuobjdump -elf` prints
/// them for ptxas 13.0.88's `-G` cubins.
pub const R_CUDA_ABS32_LO_32: u32 = 56;
/// `R_CUDA_ABS32_HI_32` (57): the high 32 bits of an absolute address, in a 32-bit immediate.
pub const R_CUDA_ABS32_HI_32: u32 = 57;
/// `R_CUDA_ABS55_16_34` (75): the absolute target of `CALL.ABS.NOINC `(function)`` (sm_90
/// and later).
pub const R_CUDA_ABS55_16_34: u32 = 75;
/// `R_CUDA_ABS47_34` (58): the same for sm_75..sm_89 (in a `.rel` section, no addend).
pub const R_CUDA_ABS47_34: u32 = 58;

/// Applies the code relocations of device-debug (`-G`) code, which calls functions by
/// absolute address: the caller builds its return address with a `MOV` pair relocated by
/// `R_CUDA_ABS32_LO_32`/`HI_32` against `kernel + label offset`, `CALL.ABS.NOINC` is relocated
/// by `R_CUDA_ABS55_16_34` (sm_90 on; `R_CUDA_ABS47_34` before) against the callee, and the callee returns with `RET.ABS.NODEC R20`
/// to the 64-bit address in R20:R21. Addresses are program-visible code addresses
/// (`CODE_WINDOW + pc`, as `LEPC` writes them), so a return address lands on the instruction
/// the label names whatever base the driver would choose. Instead of patching bit fields the
/// decoded operand is replaced (the immediate of the `MOV`, the target of the `CALL`), and
/// only where the instruction has exactly the operand the relocation type fills; anything
/// else stays unapplied and is reported when the kernel runs. Returns the (text section,
/// offset) of every relocation applied.
fn apply_code_relocs(
    c: &Cubin,
    text_addr: &HashMap<usize, u64>,
    code: &mut [Slot],
) -> Vec<(usize, u64)> {
    use sass::model::OperandKind;
    let syms = c.symbols();
    let mut applied = Vec::new();
    for s in &c.sections {
        let SectionData::Relocs { relocs, .. } = &s.data else {
            continue;
        };
        let target = s.info as usize;
        let Some(&base) = text_addr.get(&target) else {
            continue;
        };
        for r in relocs {
            if !matches!(
                r.rtype,
                R_CUDA_ABS32_LO_32 | R_CUDA_ABS32_HI_32 | R_CUDA_ABS55_16_34 | R_CUDA_ABS47_34
            ) {
                continue;
            }
            // The symbol's code address (defined in a code section; an undefined callee is
            // the driver's to link and stays unapplied).
            let Some(sym) = syms.get(r.sym as usize) else {
                continue;
            };
            let Some(&sym_base) = text_addr.get(&(sym.shndx as usize)) else {
                continue;
            };
            let pc = (sym_base + sym.value).wrapping_add_signed(r.addend);
            let Some(Slot::Inst { inst, text }) = code.get_mut(((base + r.offset) / 16) as usize)
            else {
                continue;
            };
            if !(base + r.offset).is_multiple_of(16) {
                continue;
            }
            let ok = match r.rtype {
                R_CUDA_ABS55_16_34 | R_CUDA_ABS47_34 => {
                    let abs = inst.has_mod("ABS");
                    match (inst.opcode.as_str(), inst.operands.as_mut_slice()) {
                        ("CALL", [op]) if abs && op.kind == OperandKind::Int(0) => {
                            op.kind = OperandKind::Target(pc);
                            true
                        }
                        _ => false,
                    }
                }
                _ => {
                    let addr = CODE_WINDOW + pc;
                    let half = if r.rtype == R_CUDA_ABS32_LO_32 {
                        addr & 0xffff_ffff
                    } else {
                        addr >> 32
                    };
                    match (inst.opcode.as_str(), inst.operands.as_mut_slice()) {
                        ("MOV", [_, op]) if op.kind == OperandKind::Int(0) => {
                            op.kind = OperandKind::Int(half as i64);
                            true
                        }
                        _ => false,
                    }
                }
            };
            if ok {
                text.push_str(&format!(" (relocated: type {} -> {pc:#x})", r.rtype));
                applied.push((target, r.offset));
            }
        }
    }
    applied
}

impl Image {
    /// The SM the cubin is for (from `e_flags`).
    pub fn sm(&self) -> u32 {
        self.sm
    }

    /// The names of the kernels.
    pub fn kernel_names(&self) -> Vec<String> {
        self.cubin
            .functions()
            .into_iter()
            .filter(|f| f.is_entry)
            .map(|f| f.name)
            .collect()
    }

    /// Places the module in `mem` (globals, relocated constant banks) for one run.
    pub fn instantiate(&self, mem: &mut Memory) -> Result<Program, LoadError> {
        let c = &self.cubin;
        let sm = self.sm;
        let (param_base, driver) = launch_layout(sm)?;
        let mut sec_addr: HashMap<usize, u64> = self.text_addr.clone();
        for (i, s) in c.sections.iter().enumerate() {
            if s.name == ".nv.global" || s.name == ".nv.global.init" {
                let data = match &s.data {
                    SectionData::NoBits { size } => vec![0; *size as usize],
                    _ => section_bytes(c, i),
                };
                let addr = mem.alloc(&format!("module {}", s.name), data);
                sec_addr.insert(i, addr);
            }
        }
        let syms = c.symbols();
        let sym_addr = |si: u32| -> Option<u64> {
            let s = syms.get(si as usize)?;
            let base = *sec_addr.get(&(s.shndx as usize))?;
            Some(base + s.value)
        };

        // Undefined functions (the driver links the device runtime's): addresses in the
        // extern window, one per name.
        let mut externs: Vec<String> = Vec::new();
        let mut extern_addr = |si: u32| -> Option<u64> {
            let s = syms.get(si as usize)?;
            if s.shndx != 0 || s.kind() != STT_FUNC || s.name.is_empty() {
                return None;
            }
            let i = match externs.iter().position(|n| *n == s.name) {
                Some(i) => i,
                None => {
                    externs.push(s.name.clone());
                    externs.len() - 1
                }
            };
            Some(EXTERN_WINDOW + 16 * i as u64)
        };

        // Constant banks.
        let mut banks: HashMap<u32, Vec<u8>> = HashMap::new();
        let mut kernel_banks: HashMap<(String, u32), Vec<u8>> = HashMap::new();
        let mut unapplied = Vec::new();
        let mut reloc_targets: HashMap<usize, Vec<cubin::model::Reloc>> = HashMap::new();
        for s in &c.sections {
            if let SectionData::Relocs { relocs: r, .. } = &s.data {
                reloc_targets
                    .entry(s.info as usize)
                    .or_default()
                    .extend(r.iter().cloned());
            }
        }
        for (i, s) in c.sections.iter().enumerate() {
            let Some((bank, kernel)) = bank_of(&s.name) else {
                continue;
            };
            let mut data = section_bytes(c, i);
            for r in reloc_targets.get(&i).map(Vec::as_slice).unwrap_or(&[]) {
                let name = syms.get(r.sym as usize).map_or("?", |s| s.name.as_str());
                let target = match r.rtype {
                    R_CUDA_64 => sym_addr(r.sym).or_else(|| extern_addr(r.sym)),
                    _ => None,
                };
                // A texture reference's word: the driver writes the header index of the
                // texture bound to it (here, the handle of the memory's texture bound to that
                // name, `interp::texture`); an unbound reference reads as handle 0, which
                // names no texture (a fetch through it traps).
                let texture = (r.rtype == R_CUDA_TEX_HEADER_INDEX)
                    .then(|| mem.textures().bound(name).unwrap_or(0));
                match (r.rtype, target) {
                    (R_CUDA_64, Some(a)) if r.offset as usize + 8 <= data.len() => {
                        let v = (a as i64).wrapping_add(r.addend) as u64;
                        data[r.offset as usize..r.offset as usize + 8]
                            .copy_from_slice(&v.to_le_bytes());
                    }
                    (R_CUDA_TEX_HEADER_INDEX, _)
                        if texture.is_some() && r.offset as usize + 4 <= data.len() =>
                    {
                        let h = texture.unwrap_or(0);
                        data[r.offset as usize..r.offset as usize + 4]
                            .copy_from_slice(&h.to_le_bytes());
                    }
                    (t, _) => unapplied.push(format!(
                        "relocation type {t} against `{name}` in {}",
                        s.name
                    )),
                }
            }
            match kernel {
                Some(k) => {
                    kernel_banks.insert((k.to_string(), bank), data);
                }
                None => {
                    banks.insert(bank, data);
                }
            }
        }
        // Relocations of global initializers (addresses stored in `.nv.global.init`).
        for (i, s) in c.sections.iter().enumerate() {
            if s.name != ".nv.global.init" {
                continue;
            }
            let base = sec_addr[&i];
            for r in reloc_targets.get(&i).map(Vec::as_slice).unwrap_or(&[]) {
                let name = syms.get(r.sym as usize).map_or("?", |s| s.name.as_str());
                match (r.rtype, sym_addr(r.sym)) {
                    (R_CUDA_64, Some(a)) => {
                        let v = (a as i64).wrapping_add(r.addend) as u64;
                        if mem.write(base + r.offset, &v.to_le_bytes()).is_none() {
                            unapplied.push(format!("relocation outside .nv.global.init ({name})"));
                        }
                    }
                    (t, _) => unapplied.push(format!(
                        "relocation type {t} against `{name}` in .nv.global.init"
                    )),
                }
            }
        }
        // Code relocations other than those `apply_code_relocs` applied while decoding are
        // not applied (they patch instruction fields whose bit positions per relocation type
        // are not established here): reported when the code runs.
        for (i, s) in c.sections.iter().enumerate() {
            if s.name.starts_with(".text.") {
                for r in reloc_targets.get(&i).map(Vec::as_slice).unwrap_or(&[]) {
                    if self.code_relocs.contains(&(i, r.offset)) {
                        continue;
                    }
                    let name = syms.get(r.sym as usize).map_or("?", |s| s.name.as_str());
                    unapplied.push(format!(
                        "code relocation type {} against `{name}` in {}",
                        r.rtype, s.name
                    ));
                }
            }
        }

        // Kernels.
        let mut kernels = Vec::new();
        for f in c.functions() {
            if !f.is_entry {
                continue;
            }
            let Some(sym) = syms.get(f.symbol as usize) else {
                continue;
            };
            let Some(&base) = sec_addr.get(&(sym.shndx as usize)) else {
                return Err(LoadError(format!(
                    "kernel `{}` is not in a code section",
                    f.name
                )));
            };
            let cb = kernel_banks
                .get(&(f.name.clone(), 0))
                .cloned()
                .unwrap_or_default();
            let param_block = f
                .param_block
                .map_or((param_base, 0), |(o, s)| (u32::from(o), u32::from(s)));
            // ptxas states the call stack's size (EIATTR_MAX_STACK_SIZE) when it can bound
            // it; for recursion it cannot and writes none, and the driver then gives each
            // thread its stack limit (`cudaLimitStackSize`, 1 KiB by default). Without the
            // attribute the emulator reserves that default, as a launch would.
            let stack = f
                .max_stack_size
                .unwrap_or(DRIVER_DEFAULT_STACK)
                .max(f.min_stack_size.unwrap_or(0));
            let local = u64::from(f.frame_size.unwrap_or(0)) + u64::from(stack) + f.local_size;
            let own_banks = kernel_banks
                .iter()
                .filter(|((k, b), _)| *k == f.name && *b != 0)
                .map(|((_, b), d)| (*b, d.clone()))
                .collect();
            kernels.push(Kernel {
                name: f.name.clone(),
                entry: base + sym.value,
                cbank0: cb,
                params: f.params.clone(),
                param_block,
                shared_static: f.shared_size,
                local_bytes: local.div_ceil(16) * 16,
                banks: own_banks,
            });
        }
        Ok(Program {
            sm,
            param_base,
            driver,
            code: Arc::clone(&self.code),
            sections: self.sections.clone(),
            kernels,
            banks,
            unapplied,
            externs,
        })
    }
}

fn section_bytes(c: &Cubin, i: usize) -> Vec<u8> {
    match &c.sections[i].data {
        SectionData::NoBits { size } => vec![0; *size as usize],
        d => cubin::write::encode_data(d),
    }
}

impl Program {
    /// The kernel called `name`.
    pub fn kernel(&self, name: &str) -> Option<&Kernel> {
        self.kernels.iter().find(|k| k.name == name)
    }

    /// The undefined function at address `addr` (an `R_CUDA_64` target in the extern window).
    pub fn extern_at(&self, addr: u64) -> Option<&str> {
        let off = addr.checked_sub(EXTERN_WINDOW)?;
        if !off.is_multiple_of(16) {
            return None;
        }
        self.externs.get((off / 16) as usize).map(String::as_str)
    }

    /// The code address (pc) of the instruction a program-visible code address names
    /// (`CODE_WINDOW + pc`, as `LEPC` writes it): inside a code section, 16-byte aligned.
    pub fn code_pc(&self, addr: u64) -> Option<u64> {
        let pc = addr.checked_sub(CODE_WINDOW)?;
        (pc.is_multiple_of(16) && self.section_of(pc).is_some()).then_some(pc)
    }

    /// The code section containing address `pc`.
    pub fn section_of(&self, pc: u64) -> Option<&CodeSection> {
        self.sections
            .iter()
            .find(|s| pc >= s.base && pc < s.base + s.size)
    }
}

/// A one-kernel program from instruction text in nvdisasm syntax (one instruction per line,
/// branch targets written `` `(@0x40) ``), with `param_bytes` bytes of parameters: for tests
/// and tools that exercise instruction semantics without a cubin.
pub fn program_from_text(sm: u32, lines: &[&str], param_bytes: u32) -> Result<Program, LoadError> {
    let mut code = Vec::new();
    for l in lines {
        let inst = Inst::parse(l).map_err(|e| LoadError(format!("`{l}`: {e}")))?;
        code.push(Slot::Inst {
            inst,
            text: l.to_string(),
        });
    }
    let (param_base, driver) = launch_layout(sm)?;
    let size = code.len() as u64 * 16;
    Ok(Program {
        sm,
        param_base,
        driver,
        code: Arc::new(code),
        sections: vec![CodeSection {
            name: ".text.k".into(),
            base: 0,
            size,
        }],
        kernels: vec![Kernel {
            name: "k".into(),
            entry: 0,
            cbank0: vec![0; (param_base + param_bytes) as usize],
            params: Vec::new(),
            param_block: (param_base, param_bytes),
            shared_static: 0,
            local_bytes: 256,
            banks: HashMap::new(),
        }],
        banks: HashMap::new(),
        unapplied: Vec::new(),
        externs: Vec::new(),
    })
}

/// Where the driver puts a kernel's parameters and its other words in bank 0 on `sm_<sm>`
/// (`target::Profile`), or why the emulator cannot launch the SM's code.
fn launch_layout(sm: u32) -> Result<(u32, DriverWords), LoadError> {
    let profile =
        Profile::of(sm).ok_or_else(|| LoadError(format!("unsupported: sm_{sm} cubins")))?;
    let driver = profile.driver.ok_or_else(|| {
        LoadError(format!(
            "unsupported: launching sm_{sm} code (the driver's bank-0 words are not modeled)"
        ))
    })?;
    Ok((profile.param_base, driver))
}
