// Integer and bit operations. Launch: 1 CTA of 64 threads, in = 128 u32 (a = in[t],
// b = in[64 + t]), out = 64 * 16 u32.
extern "C" __global__ void u_bits(const unsigned *in, unsigned *out)
{
    unsigned t = threadIdx.x;
    unsigned a = in[t], b = in[64 + t];
    int sa = (int)a, sb = (int)b;
    unsigned *o = out + t * 16;
    o[0] = __popc(a);
    o[1] = __clz(sa);
    o[2] = __brev(a);
    o[3] = __funnelshift_l(a, b, t);
    o[4] = __funnelshift_rc(a, b, t);
    o[5] = __byte_perm(a, b, b & 0x7777);
    o[6] = __umulhi(a, b);
    o[7] = (unsigned)__mulhi(sa, sb);
    o[8] = a / (b | 1);
    o[9] = a % (b | 1);
    o[10] = (unsigned)(sa / (sb | 1));
    o[11] = (unsigned)(sa % (sb | 1));
    o[12] = (unsigned)min(sa, sb);
    o[13] = __sad(sa, sb, t);
    o[14] = (unsigned)__ffs(sa);
    o[15] = (unsigned)(((unsigned long long)a * b) >> (t & 31)) ^ (a >> (t & 7)) ^ (unsigned)(sa >> (b & 31));
}
