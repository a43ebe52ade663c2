//! Per-function facts gathered from a cubin's symbols, sections and EIATTR records: what the
//! driver uses to launch a kernel (registers, parameter layout, shared/local sizes, ...).

use crate::eiattr::{AttrValue, KparamInfo, code};
use crate::model::*;

/// What a cubin says about one function.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FunctionFacts {
    pub name: String,
    /// Symbol index in `.symtab`.
    pub symbol: u32,
    pub is_entry: bool,
    /// Code size in bytes (`st_size`).
    pub code_size: u64,
    /// EIATTR_REGCOUNT (global `.nv.info`).
    pub registers: Option<u32>,
    /// EIATTR_FRAME_SIZE.
    pub frame_size: Option<u32>,
    /// EIATTR_MIN_STACK_SIZE.
    pub min_stack_size: Option<u32>,
    /// EIATTR_MAX_STACK_SIZE.
    pub max_stack_size: Option<u32>,
    /// Kernel parameters (EIATTR_KPARAM_INFO) by ordinal.
    pub params: Vec<KparamInfo>,
    /// EIATTR_PARAM_CBANK: parameter block offset and size in `.nv.constant0.<f>`.
    pub param_block: Option<(u16, u16)>,
    /// Size of `.nv.shared.<f>` (static shared memory), 0 when absent.
    pub shared_size: u64,
    /// Size of `.nv.local.<f>`, 0 when absent.
    pub local_size: u64,
    pub exit_offsets: Vec<u32>,
    pub s2rctaid_offsets: Vec<u32>,
    pub max_threads: Option<[u32; 3]>,
    pub reqntid: Option<[u32; 3]>,
    pub num_barriers: Option<u16>,
    pub ctaidz_used: bool,
    /// EIATTR_RESERVED_SMEM_USED: the kernel reads `%reserved_smem_offset_*`.
    pub reserved_smem_used: bool,
    /// EIATTR_INDIRECT_BRANCH_TARGETS: per indirect branch (`BRX`), its code offset and the
    /// offsets it may jump to, in record order (duplicates kept).
    pub indirect_branches: Vec<(u32, Vec<u32>)>,
}

fn records<'a>(c: &'a Cubin, name: &str) -> impl Iterator<Item = &'a crate::eiattr::Record> {
    c.section(name)
        .and_then(|s| match &s.data {
            SectionData::Attributes(r) => Some(r.as_slice()),
            _ => None,
        })
        .unwrap_or(&[])
        .iter()
}

impl Cubin {
    /// Facts for every function symbol (`STT_FUNC`) defined in `.symtab`.
    pub fn functions(&self) -> Vec<FunctionFacts> {
        let syms = self.symbols();
        let mut out = Vec::new();
        for (i, s) in syms.iter().enumerate() {
            if s.kind() != 2 || s.shndx == 0 {
                continue;
            }
            let idx = i as u32;
            let mut f = FunctionFacts {
                name: s.name.clone(),
                symbol: idx,
                is_entry: s.is_entry(),
                code_size: s.size,
                ..FunctionFacts::default()
            };
            for r in records(self, ".nv.info") {
                if let AttrValue::PerFunction { function, value } = r.value()
                    && function == idx
                {
                    match r.code {
                        code::REGCOUNT => f.registers = Some(value),
                        code::FRAME_SIZE => f.frame_size = Some(value),
                        code::MIN_STACK_SIZE => f.min_stack_size = Some(value),
                        code::MAX_STACK_SIZE => f.max_stack_size = Some(value),
                        _ => {}
                    }
                }
            }
            for r in records(self, &format!(".nv.info.{}", s.name)) {
                match (r.code, r.value()) {
                    (code::KPARAM_INFO, AttrValue::KparamInfo(k)) => f.params.push(k),
                    (code::PARAM_CBANK, AttrValue::ParamCbank { offset, size, .. }) => {
                        f.param_block = Some((offset, size))
                    }
                    (code::EXIT_INSTR_OFFSETS, AttrValue::Words(w)) => f.exit_offsets = w,
                    (code::S2RCTAID_INSTR_OFFSETS, AttrValue::Words(w)) => f.s2rctaid_offsets = w,
                    (code::MAX_THREADS, AttrValue::Dim3(d)) => f.max_threads = Some(d),
                    (code::REQNTID, AttrValue::Dim3(d)) => f.reqntid = Some(d),
                    (code::NUM_BARRIERS, AttrValue::Half(h)) => f.num_barriers = Some(h),
                    (code::CTAIDZ_USED, _) => f.ctaidz_used = true,
                    (code::RESERVED_SMEM_USED, _) => f.reserved_smem_used = true,
                    (code::INDIRECT_BRANCH_TARGETS, AttrValue::Words(w)) => f
                        .indirect_branches
                        .extend(crate::listing::indirect_branch_groups(&w).unwrap_or_default()),
                    _ => {}
                }
            }
            f.params.sort_by_key(|k| k.ordinal);
            f.shared_size = self
                .section(&format!(".nv.shared.{}", s.name))
                .map_or(0, Section::size);
            f.local_size = self
                .section(&format!(".nv.local.{}", s.name))
                .map_or(0, Section::size);
            out.push(f);
        }
        out
    }
}
