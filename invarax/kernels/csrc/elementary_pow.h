/* elementary_pow.h - invarax's pow(x, y) in double precision (docs/numerics.md, "Elementary
 * functions"): exp(y log|x|) with log|x| as a double-double of relative error below 2^-68
 * (a table of log(i / 128) and a series), the product by fma and exp from elementary_math.h;
 * the special values of C99's pow (and NumPy's). The float32 kernel rounds the
 * double-double once (ei_round_f32), and decides exact and midpoint results of integer and
 * half-integer exponents by an exact double-double power.
 */
#ifndef INVARAX_ELEMENTARY_POW_H
#define INVARAX_ELEMENTARY_POW_H

#include "elementary_inverse.h"

/* log(i / 128) = EP_LOGC[i - 90][0] + EP_LOGC[i - 90][1] (to 2^-106), i = 90 ... 181. */
static const double EP_LOGC[92][2] = {
    {-0x1.68ac83e9c6a14p-2, -0x1.a64eadd740178p-58}, /* 90 */
    {-0x1.5d5bddf595f30p-2, 0x1.6541148cbb8a2p-56}, /* 91 */
    {-0x1.522ae0738a3d8p-2, 0x1.8f7e9b38a6979p-57}, /* 92 */
    {-0x1.4718dc271c41bp-2, -0x1.8fb4c14c56eefp-60}, /* 93 */
    {-0x1.3c25277333184p-2, 0x1.2ad27e50a8ec6p-56}, /* 94 */
    {-0x1.314f1e1d35ce4p-2, 0x1.3d69909e5c3dcp-56}, /* 95 */
    {-0x1.269621134db92p-2, -0x1.e0efadd9db02bp-56}, /* 96 */
    {-0x1.1bf99635a6b95p-2, 0x1.12aeb84249223p-57}, /* 97 */
    {-0x1.1178e8227e47cp-2, 0x1.0e63a5f01c691p-57}, /* 98 */
    {-0x1.07138604d5862p-2, -0x1.cdb16ed4e9138p-56}, /* 99 */
    {-0x1.f991c6cb3b379p-3, -0x1.f665066f980a2p-57}, /* 100 */
    {-0x1.e530effe71012p-3, -0x1.2276041f43042p-59}, /* 101 */
    {-0x1.d1037f2655e7bp-3, -0x1.60629242471a2p-57}, /* 102 */
    {-0x1.bd087383bd8adp-3, -0x1.dd355f6a516d7p-60}, /* 103 */
    {-0x1.a93ed3c8ad9e3p-3, -0x1.bcafa9de97203p-57}, /* 104 */
    {-0x1.95a5adcf7017fp-3, -0x1.142c507fb7a3dp-58}, /* 105 */
    {-0x1.823c16551a3c2p-3, 0x1.1232ce70be781p-57}, /* 106 */
    {-0x1.6f0128b756abcp-3, 0x1.8de59c21e166cp-57}, /* 107 */
    {-0x1.5bf406b543db2p-3, 0x1.1f5b44c0df7e7p-61}, /* 108 */
    {-0x1.4913d8333b561p-3, 0x1.0d5604930f135p-58}, /* 109 */
    {-0x1.365fcb0159016p-3, -0x1.7d411a5b944adp-58}, /* 110 */
    {-0x1.23d712a49c202p-3, 0x1.6e38161051d69p-57}, /* 111 */
    {-0x1.1178e8227e47cp-3, 0x1.0e63a5f01c691p-58}, /* 112 */
    {-0x1.fe89139dbd566p-4, 0x1.ac9f4215f9393p-58}, /* 113 */
    {-0x1.da727638446a2p-4, -0x1.401fa71733019p-58}, /* 114 */
    {-0x1.b6ac88dad5b1cp-4, 0x1.0057eed1ca59fp-59}, /* 115 */
    {-0x1.9335e5d594989p-4, 0x1.478a85704ccb7p-58}, /* 116 */
    {-0x1.700d30aeac0e1p-4, 0x1.72566212cdd05p-61}, /* 117 */
    {-0x1.4d3115d207eacp-4, -0x1.769f42c7842ccp-58}, /* 118 */
    {-0x1.2aa04a44717a5p-4, 0x1.d15d38d2fa3f7p-58}, /* 119 */
    {-0x1.08598b59e3a07p-4, 0x1.dd7009902bf32p-58}, /* 120 */
    {-0x1.ccb73cdddb2ccp-5, 0x1.e48fb0500efd4p-59}, /* 121 */
    {-0x1.894aa149fb343p-5, -0x1.a8be97660a23dp-60}, /* 122 */
    {-0x1.466aed42de3eap-5, 0x1.cdd6f7f4a137ep-59}, /* 123 */
    {-0x1.0415d89e74444p-5, -0x1.c05cf1d753622p-59}, /* 124 */
    {-0x1.8492528c8cabfp-6, 0x1.d192d0619fa67p-60}, /* 125 */
    {-0x1.0205658935847p-6, -0x1.27c8e8416e71fp-60}, /* 126 */
    {-0x1.010157588de71p-7, -0x1.46662d417ced0p-62}, /* 127 */
    {0x0.0p+0, 0x0.0p+0}, /* 128 */
    {0x1.fe02a6b106789p-8, -0x1.e44b7e3711ebfp-67}, /* 129 */
    {0x1.fc0a8b0fc03e4p-7, -0x1.83092c59642a1p-62}, /* 130 */
    {0x1.7b91b07d5b11bp-6, -0x1.5b602ace3a510p-60}, /* 131 */
    {0x1.f829b0e783300p-6, 0x1.33e3f04f1ef23p-60}, /* 132 */
    {0x1.39e87b9febd60p-5, -0x1.5bfa937f551bbp-59}, /* 133 */
    {0x1.77458f632dcfcp-5, 0x1.18d3ca87b9296p-59}, /* 134 */
    {0x1.b42dd711971bfp-5, -0x1.eb9759c130499p-60}, /* 135 */
    {0x1.f0a30c01162a6p-5, 0x1.85f325c5bbacdp-59}, /* 136 */
    {0x1.16536eea37ae1p-4, -0x1.79da3e8c22cdap-60}, /* 137 */
    {0x1.341d7961bd1d1p-4, -0x1.b599f227becbbp-58}, /* 138 */
    {0x1.51b073f06183fp-4, 0x1.a49e39a1a8be4p-58}, /* 139 */
    {0x1.6f0d28ae56b4cp-4, -0x1.906d99184b992p-58}, /* 140 */
    {0x1.8c345d6319b21p-4, -0x1.4a697ab3424a9p-61}, /* 141 */
    {0x1.a926d3a4ad563p-4, 0x1.942f48aa70ea9p-58}, /* 142 */
    {0x1.c5e548f5bc743p-4, 0x1.5d617ef8161b1p-60}, /* 143 */
    {0x1.e27076e2af2e6p-4, -0x1.61578001e0162p-60}, /* 144 */
    {0x1.fec9131dbeabbp-4, -0x1.5746b9981b36cp-58}, /* 145 */
    {0x1.0d77e7cd08e59p-3, 0x1.9a5dc5e9030acp-57}, /* 146 */
    {0x1.1b72ad52f67a0p-3, 0x1.483023472cd74p-58}, /* 147 */
    {0x1.29552f81ff523p-3, 0x1.301771c407dbfp-57}, /* 148 */
    {0x1.371fc201e8f74p-3, 0x1.de6cb62af18a0p-58}, /* 149 */
    {0x1.44d2b6ccb7d1ep-3, 0x1.9f4f6543e1f88p-57}, /* 150 */
    {0x1.526e5e3a1b438p-3, -0x1.746ff8a470d3ap-57}, /* 151 */
    {0x1.5ff3070a793d4p-3, -0x1.bc60efafc6f6ep-58}, /* 152 */
    {0x1.6d60fe719d21dp-3, -0x1.caae268ecd179p-57}, /* 153 */
    {0x1.7ab890210d909p-3, 0x1.be36b2d6a0608p-59}, /* 154 */
    {0x1.87fa06520c911p-3, -0x1.bf7fdbfa08d9ap-57}, /* 155 */
    {0x1.9525a9cf456b4p-3, 0x1.d904c1d4e2e26p-57}, /* 156 */
    {0x1.a23bc1fe2b563p-3, 0x1.93711b07a998cp-59}, /* 157 */
    {0x1.af3c94e80bff3p-3, -0x1.398cff3641985p-58}, /* 158 */
    {0x1.bc286742d8cd6p-3, 0x1.4fce744870f55p-58}, /* 159 */
    {0x1.c8ff7c79a9a22p-3, -0x1.4f689f8434012p-57}, /* 160 */
    {0x1.d5c216b4fbb91p-3, 0x1.6e443597e4d40p-57}, /* 161 */
    {0x1.e27076e2af2e6p-3, -0x1.61578001e0162p-59}, /* 162 */
    {0x1.ef0adcbdc5936p-3, 0x1.48637950dc20dp-57}, /* 163 */
    {0x1.fb9186d5e3e2bp-3, -0x1.caaae64f21acbp-57}, /* 164 */
    {0x1.0402594b4d041p-2, -0x1.28ec217a5022dp-57}, /* 165 */
    {0x1.0a324e27390e3p-2, 0x1.7dcfde8061c03p-56}, /* 166 */
    {0x1.1058bf9ae4ad5p-2, 0x1.89fa0ab4cb31dp-58}, /* 167 */
    {0x1.1675cababa60ep-2, 0x1.ce63eab883717p-61}, /* 168 */
    {0x1.1c898c16999fbp-2, -0x1.0e5c62aff1c44p-60}, /* 169 */
    {0x1.22941fbcf7966p-2, -0x1.76f5eb09628afp-56}, /* 170 */
    {0x1.2895a13de86a3p-2, 0x1.7ad24c13f040ep-56}, /* 171 */
    {0x1.2e8e2bae11d31p-2, -0x1.8f4cdb95ebdf9p-56}, /* 172 */
    {0x1.347dd9a987d55p-2, -0x1.4dd4c580919f8p-57}, /* 173 */
    {0x1.3a64c556945eap-2, -0x1.c68651945f97cp-57}, /* 174 */
    {0x1.404308686a7e4p-2, -0x1.0bcfb6082ce6dp-56}, /* 175 */
    {0x1.4618bc21c5ec2p-2, 0x1.f42decdeccf1dp-56}, /* 176 */
    {0x1.4be5f957778a1p-2, -0x1.259b35b04813dp-57}, /* 177 */
    {0x1.51aad872df82dp-2, 0x1.3927ac19f55e3p-59}, /* 178 */
    {0x1.5767717455a6cp-2, 0x1.526adb283660cp-56}, /* 179 */
    {0x1.5d1bdbf5809cap-2, 0x1.4236383dc7fe1p-56}, /* 180 */
    {0x1.62c82f2b9c795p-2, 0x1.7b7af915300e5p-57}, /* 181 */
};

/* log a = lh + ll for positive finite a: a = 2^k m, m in [sqrt(2)/2, sqrt(2)), c = i / 128
 * nearest m, t = (m - c) / c as a double-double (|t| <= 2^-7.5), log1p t = t - t^2/2 +
 * t^3 (1/3 - t/4 + ... + t^6/9) with the first two terms double-double. */
EM_INLINE void ep_log_dd(double a, double *lh, double *ll) {
    int sub = em_bits(a) < 0x0010000000000000ULL;
    int64_t k;
    double m = em_split(em_bits(a * em_select(sub, 0x1p54, 1.0)), &k);
    double kd = em_int_to_double(k - (int64_t)sub * 54);
    double f = m * 128.0 + EM_SHIFT;
    int64_t i = (int64_t)(em_bits(f) - em_bits(EM_SHIFT));
    double c = em_int_to_double(i) * 0x1p-7;
    double u = m - c; /* exact (Sterbenz) */
    double th = u / c, tl = fma(-th, c, u) / c;
    double t2 = th * th, t2l = fma(th, th, -t2) + 2.0 * th * tl;
    double p = 1.0 / 3.0 + th * (-0.25 + th * (0.2 + th * (-1.0 / 6.0 + th * (1.0 / 7.0 +
               th * (-0.125 + th * (1.0 / 9.0))))));
    double s1, e1, s2, e2, s3, e3;
    ei_fast_two_sum(th, -0.5 * t2, &s1, &e1); /* t - t^2/2 */
    double low = e1 + (tl - 0.5 * t2l + t2 * th * p);
    ei_two_sum(kd * EM_LN2_HI, EP_LOGC[i - 90][0], &s2, &e2);
    ei_two_sum(s2, s1, &s3, &e3);
    double tail = (e2 + e3) + ((kd * EM_LN2_LO + EP_LOGC[i - 90][1]) + low);
    ei_fast_two_sum(s3, tail, lh, ll);
}

/* (ah + al)(bh + bl) = ph + pl. */
EM_INLINE void ep_mul(double ah, double al, double bh, double bl, double *ph, double *pl) {
    double p = ah * bh;
    ei_fast_two_sum(p, fma(ah, bh, -p) + (ah * bl + al * bh), ph, pl);
}

/* a^y = hi + lo for finite a > 0, finite y (relative error below 2^-60 before overflow and
 * underflow; inf or 0 beyond them). */
EM_INLINE void ep_pow_pos(double a, double y, double *hi, double *lo) {
    double lh, ll;
    ep_log_dd(a, &lh, &ll);
    double ph = y * lh, pl = fma(y, lh, -ph) + y * ll;
    pl = em_select(em_abs(ph) < 1024.0, pl, 0.0);
    int64_t k;
    double eh, el;
    em_exp_reduced(em_clamp_exp_arg(ph), &k, &eh, &el);
    el += eh * pl; /* exp(ph + pl) = exp(ph) (1 + pl) to 2^-100 */
    ei_fast_two_sum(eh, el, &eh, &el);
    *hi = em_scale(eh, k);
    *lo = em_scale(el, k) * em_select((em_abs(*hi) < INFINITY) & (*hi != 0.0), 1.0, 0.0);
}

/* a^n = hi + lo for a > 0 and an integer 0 < |n| <= 128, by binary powering in double-double:
 * exact whenever a^|n| fits in 106 bits (a midpoint of float32 results does). */
EM_INLINE void ep_pow_int(double a, double n, double *hi, double *lo) {
    int64_t e = (int64_t)em_abs(n);
    double rh = 1.0, rl = 0.0, bh = a, bl = 0.0;
    for (; e > 0; e >>= 1) {
        if (e & 1) ep_mul(rh, rl, bh, bl, &rh, &rl);
        ep_mul(bh, bl, bh, bl, &bh, &bl);
    }
    if (n < 0) ei_div(1.0, 0.0, rh, rl, &rh, &rl);
    ei_fast_two_sum(rh, rl, hi, lo);
}

/* floor(t) == t, by adding and subtracting 2^52 (exact rounding to an integer below 2^52;
 * GCC does not vectorise floor where floating-point traps are kept). */
EM_INLINE int ep_is_whole(double t) {
    double a = em_abs(t);
    return (a >= 0x1p52) | ((a + 0x1p52) - 0x1p52 == a);
}
EM_INLINE int ep_is_int(double y) { return (em_abs(y) < INFINITY) & ep_is_whole(y); }
EM_INLINE int ep_is_odd(double y) {
    return ep_is_int(y) & (em_abs(y) < 0x1p53) & !ep_is_whole(0.5 * y);
}

/* pow's special values where they apply (*special = 1), else 0 with *neg telling whether the
 * result is -|x|^y (x < 0, y an odd integer). */
EM_INLINE double ep_special(double x, double y, int *special, int *neg) {
    double a = em_abs(x), ay = em_abs(y);
    int yodd = ep_is_odd(y);
    /* the cases in order, the first that applies giving r: selected from the last up */
    int c1 = (y == 0.0) | (x == 1.0), c2 = (x != x) | (y != y), c3 = ay == INFINITY;
    int c4 = a == 0.0, c5 = a == INFINITY, c6 = (x < 0.0) & !ep_is_int(y);
    double r = NAN; /* c6 */
    r = em_select(c5, em_select(y < 0.0, 0.0, INFINITY) *
                          em_select((x < 0.0) & yodd, -1.0, 1.0), r);
    r = em_select(c4, em_select(y < 0.0, em_select(yodd, em_with_sign(INFINITY, x), INFINITY),
                                em_select(yodd, x, 0.0)), r);
    r = em_select(c3, em_select(a == 1.0, 1.0, em_select((a < 1.0) == (y > 0.0), 0.0, INFINITY)),
                  r);
    r = em_select(c2, em_nan_or(x, y + y), r); /* one NaN's payload */
    r = em_select(c1, 1.0, r);
    *special = c1 | c2 | c3 | c4 | c5 | c6;
    *neg = (x < 0.0) & yodd;
    return r;
}

EM_INLINE double ep_pow(double x, double y) {
    int special, neg;
    double r = ep_special(x, y, &special, &neg);
    double hi, lo; /* computed for every x and y (a placeholder where special), then selected */
    ep_pow_pos(em_abs(x), y, &hi, &lo);
    return em_select(special, r, em_select(neg, -hi, hi));
}

/* The float32 pow of float32 operands, correctly rounded from the double-double; exact and
 * midpoint results (integer y, or half-integer y of a square) by ep_pow_int. */
EM_INLINE float ep_pow_f32(float xf, float yf) {
    double x = xf, y = yf;
    int special, neg;
    double r = ep_special(x, y, &special, &neg);
    if (special) return (float)r;
    double a = em_abs(x), hi, lo;
    ep_pow_pos(a, y, &hi, &lo);
    if (em_f32_is_hard(hi)) {
        double s = sqrt(a), y2 = 2.0 * y;
        if (ep_is_int(y) && em_abs(y) <= 128.0) ep_pow_int(a, y, &hi, &lo);
        else if (ep_is_int(y2) && em_abs(y2) <= 128.0 && fma(s, s, -a) == 0.0)
            ep_pow_int(s, y2, &hi, &lo);
    }
    float out = ei_round_f32(hi, lo);
    return neg ? -out : out;
}

#endif
