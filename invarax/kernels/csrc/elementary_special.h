/* elementary_special.h - invarax's erf and erfc in double precision (docs/numerics.md,
 * "Elementary functions"), on top of elementary_math.h and elementary_inverse.h.
 *
 * |x| < 1/2: erf x = (2 / sqrt(pi)) x S(x^2), S(z) = sum_n (-1)^n z^n / (n! (2n + 1)), the
 * first two terms in double-double. |x| >= 1/2: erfc |x| = exp(-x^2) erfcx |x|, exp from
 * elementary_math.h with x^2 split exactly, erfcx from a polynomial per interval (below);
 * erf = 1 - erfc, erfc(-|x|) = 2 - erfc |x|. Results carry a relative error below 2^-57
 * before their final rounding.
 */
#ifndef INVARAX_ELEMENTARY_SPECIAL_H
#define INVARAX_ELEMENTARY_SPECIAL_H

#include "elementary_inverse.h"

#define ES_TWO_OVER_SQRTPI_HI 0x1.20dd750429b6dp+0
#define ES_TWO_OVER_SQRTPI_LO 0x1.1ae3a914fed80p-56
#define ES_ERF_ONE 6.0      /* erf x rounds to 1 and erfc(-x) to 2 above it */
#define ES_ERFC_ZERO 27.3   /* erfc x rounds to 0 above it */

/* erfcx(x) = exp(x^2) erfc(x) on [2^e (1 + j/4), 2^e (1 + (j + 1)/4)), row 4 (e + 1) + j for
 * e = -1 ... 4: the polynomial in t = x - c, c the interval's midpoint, as c0 (hi, lo),
 * c1 (hi, lo), c2 ... c17 (tools/fit_erfcx.py: interpolation at 18 Chebyshev points,
 max relative error of the rounded polynomials: 2^-60.4). */
static const double ES_ERFCX[24][20] = {
    {0x1.2b84f076e14fbp-1, 0x1.b8bd1accf8123p-55, -0x1.e18ab7052be7fp-2, 0x1.c4c5d3382f510p-56, 0x1.482bd9fad9ed0p-2, -0x1.8bed65e01718dp-3, 0x1.b1a22aa7a6dc0p-4, -0x1.b65943018044bp-5, 0x1.9dcc15144e60fp-6, -0x1.6ff6b38454d3fp-7, 0x1.364eb29716855p-8, -0x1.f301024a60e0dp-10, 0x1.80374a07678f3p-11, -0x1.1c5283fa656b8p-12, 0x1.95aac68fb9674p-14, -0x1.17b93b27fe041p-15, 0x1.75b53b625e850p-17, -0x1.e4a16b7480c2bp-19, 0x1.320d21c6d7aadp-20, -0x1.77d185c56390fp-22},
    {0x1.0fce4e96dd619p-1, -0x1.7210607953137p-57, -0x1.97fe7bf1c60f0p-2, 0x1.cd62292f30155p-57, 0x1.071da7f78298dp-2, -0x1.2ecd75f4d05d4p-3, 0x1.3e0e0ed6b5f18p-4, -0x1.358dce2b361d2p-5, 0x1.1a31bff52474bp-6, -0x1.e5d3e4fd95e6fp-8, 0x1.8d62a9331d61fp-9, -0x1.366c6d2e3c44bp-10, 0x1.d1156c45272fdp-12, -0x1.4f411531f65d7p-13, 0x1.d2741153be266p-15, -0x1.39f2a04759ff8p-16, 0x1.99c0a4b5b8d23p-18, -0x1.03c18743b4ca9p-19, 0x1.40f5700d064a0p-21, -0x1.81d7fbff0aec6p-23},
    {0x1.f0723ff5acdf9p-2, -0x1.7b669ffa31576p-58, -0x1.5cbc2c216df00p-2, 0x1.95f54bdaba391p-57, 0x1.aa32b83507192p-3, -0x1.d43ed8ca5d7a1p-4, 0x1.d7f26045a23f1p-5, -0x1.ba6d691685b3fp-6, 0x1.859d3cc5fa92bp-7, -0x1.44bd2e2b89098p-8, 0x1.01b062044ae6dp-9, -0x1.87347d1168316p-11, 0x1.1d29276135d69p-12, -0x1.90857bbcf77f4p-14, 0x1.0fbd63005b97ap-15, -0x1.65145cf55ccf6p-17, 0x1.c755066bbbbb5p-19, -0x1.1a3aac3842aa9p-20, 0x1.552efeee05886p-22, -0x1.9190da48fe2afp-24},
    {0x1.c7f81382721efp-2, -0x1.3f947ee724dfbp-62, -0x1.2c84af7c10e14p-2, -0x1.4881059988d91p-57, 0x1.5c775dfc44978p-3, -0x1.6dcc9e7a2c9b5p-4, 0x1.61fee765ff5d7p-5, -0x1.3fc8366a2e3f3p-6, 0x1.102167daf7951p-7, -0x1.b75cb1aca9956p-9, 0x1.524f5c6cffac2p-10, -0x1.f329c42d74ddbp-12, 0x1.621c1d83c04e0p-13, -0x1.e49df1f3ec6d6p-15, 0x1.40b421156db99p-16, -0x1.9b6e2a681b6f1p-18, 0x1.00504abbd646ap-19, -0x1.36b3aa6fcb290p-21, 0x1.6f827cda82d8dp-23, -0x1.a78595ff7f6b3p-25},
    {0x1.9531e09b149b5p-2, -0x1.aa513235e90d6p-58, -0x1.e78b356770fbbp-3, 0x1.ea9d55595b3bdp-57, 0x1.05e72521ca1b8p-3, -0x1.01343a2c92265p-4, 0x1.d4e711a2df97dp-6, -0x1.910a5d7c0a71fp-7, 0x1.446c5166ccf50p-8, -0x1.f38c6d05105bbp-10, 0x1.6fd9a57ac0bb6p-11, -0x1.041e38d558dc8p-12, 0x1.62743c0447c6dp-14, -0x1.d2b2ffdd4bf98p-16, 0x1.2997db1e863a9p-17, -0x1.705f7c7edba77p-19, 0x1.bb655b5fb603cp-21, -0x1.03e853821c322p-22, 0x1.2acc9a738bcebp-24, -0x1.4d9baebd33c33p-26},
    {0x1.5f88f52f3c76bp-2, -0x1.b7eb97a02cf44p-57, -0x1.797a639d8129dp-3, -0x1.df1e6644f33d0p-58, 0x1.701342cbcea7bp-4, -0x1.4bcdb9d9083c2p-5, 0x1.17eba60d31fcap-6, -0x1.bdf24bccac617p-8, 0x1.51ab9ffce7487p-9, -0x1.e8ae68b41e917p-11, 0x1.535f57fdf98fcp-12, -0x1.c5fa6b09cc75cp-14, 0x1.254ed1ea818f5p-15, -0x1.6f0626ddcc3e1p-17, 0x1.bdb737409bb72p-19, -0x1.07265dcac068ap-20, 0x1.2ea01816c37b9p-22, -0x1.537486222065fp-24, 0x1.75b855f81d4f9p-26, -0x1.903e51c2b1242p-28},
    {0x1.3583f6644327bp-2, -0x1.88eb8ebfdcc6fp-56, -0x1.2b11e6959934cp-3, 0x1.d03d8df6e7273p-57, 0x1.0a15ac2adab35p-4, -0x1.ba018e6428103p-6, 0x1.5a142948a9b2fp-7, -0x1.014eae28304aep-8, 0x1.6d609f6ab13b0p-10, -0x1.f1b43d3ab831cp-12, 0x1.465ecd15accf5p-13, -0x1.9d62282ca3314p-15, 0x1.fafc8f3e741d2p-17, -0x1.2db3b73ed8f6dp-18, 0x1.5d2363682777cp-20, -0x1.89834c7de1845p-22, 0x1.b09f109d11d73p-24, -0x1.d08c4f5e7d5a3p-26, 0x1.ea06f8b4d8364p-28, -0x1.f79fa2ad9320ap-30},
    {0x1.13e5743b60480p-2, 0x1.ca1dfca5d5345p-56, -0x1.e36580c7f734ap-4, -0x1.93ccd69c7d633p-58, 0x1.8a6efeed233adp-5, -0x1.2ef92f6f10797p-6, 0x1.b99589d40f23dp-8, -0x1.33237c3eeaceep-9, 0x1.99b60e42dd5a3p-11, -0x1.070e0cb5e2660p-12, 0x1.4631c4b0b2364p-14, -0x1.87a61e43c3132p-16, 0x1.c8594802ef757p-18, -0x1.0286351aafb68p-19, 0x1.1d4f487803352p-21, -0x1.3329f45fff251p-23, 0x1.43079b195ac1dp-25, -0x1.4c3f8a9058a02p-27, 0x1.4ffccb5212a06p-29, -0x1.4b8898864094fp-31},
    {0x1.d94446d627932p-3, -0x1.a8198a7e2d5eep-58, -0x1.6a70d2bb37411p-4, 0x1.ffe6c61bff433p-62, 0x1.0615670e25a7bp-5, -0x1.6883f9919a17ap-7, 0x1.da595561f7d33p-9, -0x1.2bd251bb2f029p-10, 0x1.6d7743d3b2803p-12, -0x1.aed7ebc99e2d9p-14, 0x1.ec773cc92981cp-16, -0x1.117a66646667cp-17, 0x1.27af4288385e7p-19, -0x1.37b9a5ad13d44p-21, 0x1.40e796964ba02p-23, -0x1.42fe8b94000b4p-25, 0x1.3e2f8735e9f04p-27, -0x1.332a068ffa2dcp-29, 0x1.27376c217d54ep-31, -0x1.1237a22c1424fp-33},
    {0x1.8c9eb68ff27d7p-3, -0x1.bb4e763c24916p-57, -0x1.0305781330099p-4, 0x1.10248e272ddcep-59, 0x1.43b98bac83823p-6, -0x1.84e9ab30e6ab3p-8, 0x1.c2c72fd72763ep-10, -0x1.f99e41ecb0904p-12, 0x1.131bb16125571p-13, -0x1.2312b259675bfp-15, 0x1.2bfb5b0eb9fe9p-17, -0x1.2da329c48f41ep-19, 0x1.2856faaf6003bp-21, -0x1.1ccf9b6190e10p-23, 0x1.0c1603e723e5dp-25, -0x1.eec75415ab0bap-28, 0x1.bffe61faff168p-30, -0x1.8e64f9eb01eb1p-32, 0x1.60b4a16078596p-34, -0x1.2f0fdfa329b15p-36},
    {0x1.54a7a08d4bb45p-3, -0x1.6a0d9132d40a8p-61, -0x1.82a8522b868a1p-5, 0x1.b91956c8e53f7p-60, 0x1.a7eddc9ee6425p-7, -0x1.c24b49c47a2c4p-9, 0x1.d085857a17f33p-11, -0x1.d25ebba1c4911p-13, 0x1.c882f0238146dp-15, -0x1.b45d025fa26b3p-17, 0x1.97dd78d735c31p-19, -0x1.753cab5819d85p-21, 0x1.4ec091fd514efp-23, -0x1.268c3c47c5d42p-25, 0x1.fcf8b52068d66p-28, -0x1.b0237dc8c91dep-30, 0x1.68ccfb4680ccdp-32, -0x1.287575be7c3d6p-34, 0x1.e50e0ccd937d8p-37, -0x1.8288b8906c810p-39},
    {0x1.2a2af19c14930p-3, -0x1.fa04a06a32586p-57, -0x1.2aa6503acda11p-5, -0x1.1d40a8d072a4ep-62, 0x1.22f0664f3cbf9p-7, -0x1.1434ae05873abp-9, 0x1.fff032a0df889p-12, -0x1.cfcdea1b1f551p-14, 0x1.9b50d0d260d9cp-16, -0x1.65778aad394d4p-18, 0x1.30c2fb3fecb1dp-20, -0x1.fe3e32b3e0b4fp-23, 0x1.a3bee31613954p-25, -0x1.539510e2def15p-27, 0x1.0e5db50ec9a6fp-29, -0x1.a7f254ea2d09bp-32, 0x1.477d23c2d8af3p-34, -0x1.f2cfc875c67c6p-37, 0x1.7a4abbfaa1afdp-39, -0x1.18559f85d7e04p-41},
    {0x1.f5b2a049cf4c6p-4, -0x1.fc4bbad99fca6p-58, -0x1.aa3eb6a946f7ep-6, -0x1.28e1015c4076dp-60, 0x1.62c12cb5f7577p-8, -0x1.218ed930b23b1p-10, 0x1.d00785f2ed4fcp-13, -0x1.6d54b133d64fep-15, 0x1.1ad6a32debb18p-17, -0x1.aef8ea4ac0539p-20, 0x1.4354fb1f3b2abp-22, -0x1.de0953c6ac0a3p-25, 0x1.5c64b2d4b2ea7p-27, -0x1.f4e8f5037346dp-30, 0x1.635e7d6e1aa3fp-32, -0x1.f1d41008c2360p-35, 0x1.5843ceac122dap-37, -0x1.d6af7a6c276b5p-40, 0x1.4839ae4408aeep-42, -0x1.b64cae64aaa54p-45},
    {0x1.9d8a8f2284f2cp-4, -0x1.5b0277ea91eb0p-58, -0x1.238ca71b93fc3p-6, -0x1.52a7305631222p-60, 0x1.95252b932efe3p-9, -0x1.15976ddda3ca1p-11, 0x1.774f4826dc857p-14, -0x1.f4e46d179e3b8p-17, 0x1.4a17e19bfd2b4p-19, -0x1.add7ac9ca56f0p-22, 0x1.149cd78269044p-24, -0x1.60001e7bd4300p-27, 0x1.bb09ba1c66057p-30, -0x1.13d9c8378f872p-32, 0x1.53f6f03bbcf8dp-35, -0x1.9ec6113ff21abp-38, 0x1.f4f86c91e1b69p-41, -0x1.2bbcee0ae7971p-43, 0x1.6c174212a851bp-46, -0x1.ab8a1bd4483b2p-49},
    {0x1.5f75c42e97171p-4, -0x1.a1eaaa8067c54p-58, -0x1.a6e2cf277a0cbp-7, -0x1.23ca674444ad7p-61, 0x1.f75ef7a0fb2dbp-10, -0x1.28787f0e7f4c6p-12, 0x1.59b29296c518dp-15, -0x1.8f23feccb739dp-18, 0x1.c871a15eaf7a7p-21, -0x1.028f46472a765p-23, 0x1.2246795857e03p-26, -0x1.43003469421b8p-29, 0x1.6450bce530042p-32, -0x1.85c138ee86303p-35, 0x1.a6d2b008d0bfap-38, -0x1.c70114dc0c6ebp-41, 0x1.e5b3b7cae9bf4p-44, -0x1.01476116ff753p-46, 0x1.13be73f60abe8p-49, -0x1.1fb217f20e744p-52},
    {0x1.31742f4d8d4d3p-4, -0x1.f82bc955a8da2p-59, -0x1.404455ba9f3bep-7, -0x1.86b852c144b71p-61, 0x1.4d07bba601411p-10, -0x1.5783a27fad25ap-13, 0x1.5f8a69c9ddb98p-16, -0x1.64fcbb7153f95p-19, 0x1.67ca2bf7eaa53p-22, -0x1.67f14d3524706p-25, 0x1.657f39618955ep-28, -0x1.608ea2512eb5bp-31, 0x1.594675da782d8p-34, -0x1.4fd82c5970f78p-37, 0x1.447de018a655fp-40, -0x1.377816cd007bap-43, 0x1.29041368db460p-46, -0x1.1979124b7d76fp-49, 0x1.0d34ddc49949bp-52, -0x1.f7e153ba2c64fp-56},
    {0x1.fe6cc4a0f9538p-5, 0x1.c95bf1757b219p-59, -0x1.c046699d77d51p-8, -0x1.7538d5275a359p-62, 0x1.876373f4a0f3ap-11, -0x1.53c131b5cb29fp-14, 0x1.254381038c8eep-17, -0x1.f773505c35143p-21, 0x1.adc5f7f2724cep-24, -0x1.6ce6631a86dc1p-27, 0x1.342c874ae4738p-30, -0x1.02e7b78a47cb1p-33, 0x1.b0c8dfc0f2a29p-37, -0x1.67e23cfb8d94cp-40, 0x1.29c48d8c066abp-43, -0x1.ea4f3c15a0e07p-47, 0x1.9156ed68ec7e4p-50, -0x1.473ed98f1ad93p-53, 0x1.1642f76ef5003p-56, -0x1.c152b968e946dp-60},
    {0x1.a273c57e476cep-5, -0x1.6d026dbe8ae73p-59, -0x1.2ddd3d589bfb0p-8, -0x1.aa95f44909eeap-62, 0x1.b1c8923879d89p-12, -0x1.3672f098120bbp-15, 0x1.baa1d9d8421fap-19, -0x1.3a555d7a84654p-22, 0x1.bcbee2a203492p-26, -0x1.397286296fbe0p-29, 0x1.b82d45218056ap-33, -0x1.33eef59fb4a68p-36, 0x1.ad45235cc93f6p-40, -0x1.2a212eb00e42cp-43, 0x1.9ca0a0974faf6p-47, -0x1.1c8a18a84e327p-50, 0x1.86df9a387aea9p-54, -0x1.0baad1f5bce04p-57, 0x1.7991e3c98623ap-61, -0x1.00bd04bb51a68p-64},
    {0x1.627bcc27cb4aep-5, -0x1.d520e735f8f24p-60, -0x1.b1be47a913fc3p-9, 0x1.636f927f2cf14p-63, 0x1.0898f73586fcfp-12, -0x1.41e750b2e0636p-16, 0x1.8682d21856146p-20, -0x1.d868cc70fabdbp-24, 0x1.1cf1ff6c645dap-27, -0x1.56cb0dd5a93b7p-31, 0x1.9b410bb2c6a31p-35, -0x1.ec0ba0fd75857p-39, 0x1.258f49ff683c6p-42, -0x1.5d580df357044p-46, 0x1.9e9fec7985d3bp-50, -0x1.eace5c9b4125ap-54, 0x1.21a8f4b4448fbp-57, -0x1.5518bc1b47811p-61, 0x1.9a821ce9d4890p-65, -0x1.e0dd8e00c8d1bp-69},
    {0x1.33714a024097ep-5, 0x1.f3b4d0ae8f0a5p-59, -0x1.467f441a50cf9p-9, -0x1.fb350f41b2173p-65, 0x1.59fa2994d54efp-13, -0x1.6dd369db39094p-17, 0x1.81fb2ba7eb241p-21, -0x1.96605f1ea2fbfp-25, 0x1.aaf0d3bb729cfp-29, -0x1.bf9951f90248bp-33, 0x1.d445b88022c0ap-37, -0x1.e8e11ca4e6705p-41, 0x1.fd55eddb617c7p-45, -0x1.08c70e0e680eap-48, 0x1.12b9ab33749ccp-52, -0x1.1c776e4ed9132p-56, 0x1.25ea1027f87d8p-60, -0x1.2f1c2a5555145p-64, 0x1.3dd9e1d941c0fp-68, -0x1.46774e51e3604p-72},
    {0x1.005fe090c5e5dp-5, -0x1.4a17c8c2b3172p-59, -0x1.c661852c5133ap-10, -0x1.3b9e4d99de1d0p-66, 0x1.920b4fb071805p-14, -0x1.633259365787bp-18, 0x1.3955a9a783d44p-22, -0x1.13fdbd8e16f3ap-26, 0x1.e578451bff5a3p-31, -0x1.aa561a7a5dbfcp-35, 0x1.75d9d498236e6p-39, -0x1.4757d9631092dp-43, 0x1.1e333302b39d4p-47, -0x1.f3b9622d0b133p-52, 0x1.b3a590b4da5a8p-56, -0x1.7b3ab85a96e51p-60, 0x1.493d21722e2dap-64, -0x1.1dc73c0a0fec2p-68, 0x1.05725c5659a34p-72, -0x1.c480b75600ad7p-77},
    {0x1.a3bc12161d4ebp-6, -0x1.b352d20d7a1a9p-61, -0x1.30a253d642e9cp-10, -0x1.758b81bb97b5ap-64, 0x1.b9bd9f029a792p-15, -0x1.3ff35b4b9dfa9p-19, 0x1.cf017aa140a55p-24, -0x1.4eabfd67a0ba2p-28, 0x1.e35421d7c3646p-33, -0x1.5ca8142a6efb1p-37, 0x1.f6830eb5e78fep-42, -0x1.69c477e0c5ab7p-46, 0x1.042ec633a6ab2p-50, -0x1.75df943395164p-55, 0x1.0c5b1519add32p-59, -0x1.80da6cd80bee1p-64, 0x1.138938c19e5bap-68, -0x1.8a5f5cff704bep-73, 0x1.246e81d4f7c07p-77, -0x1.a1b464f0582adp-82},
    {0x1.63438bf2c3ee9p-6, -0x1.1fc7373a1e358p-61, -0x1.b49a775427ef7p-11, -0x1.0ec5d13ee55cep-65, 0x1.0c15fcc6f7feap-15, -0x1.48fb6bc69793cp-20, 0x1.936a6b39ad224p-25, -0x1.ee543f9173115p-30, 0x1.2ea50cffc2cb2p-34, -0x1.724f1c7a924f9p-39, 0x1.c4c5dc2c01301p-44, -0x1.1499986548818p-48, 0x1.51b502d6eeed4p-53, -0x1.9c045a0ea889cp-58, 0x1.f65154613eb70p-63, -0x1.31fc06418c1b6p-67, 0x1.74675e790be60p-72, -0x1.c50c36d40353bp-77, 0x1.1ab58e756d478p-81, -0x1.576d5a6ed4570p-86},
    {0x1.33f3abfd60d6fp-6, 0x1.060d74c798a76p-60, -0x1.481e34f76a622p-11, -0x1.89995154f39c4p-67, 0x1.5d6955b46bd2ap-16, -0x1.73e1a60e21d15p-21, 0x1.8b940e583cbfep-26, -0x1.a48dc5749581ap-31, 0x1.bedc4e961dc28p-36, -0x1.da8d76af8b9a8p-41, 0x1.f7af518ae7dcep-46, -0x1.0b281b4391105p-50, 0x1.1b3f5e73da3a0p-55, -0x1.2c24dc0e8df3cp-60, 0x1.3de02891b6bb6p-65, -0x1.5078c58dad33fp-70, 0x1.63e78f1290ba6p-75, -0x1.78514cbb26016p-80, 0x1.95a2e5b37ac8cp-85, -0x1.ac6df791d5bb6p-90},
};

/* erfcx(x) = gh + gl for 1/2 <= x < 32: c0 + c1 t in double-double (t = x - c is exact,
 * |t| <= x / 8), the rest by Horner in double. */
EM_INLINE void es_erfcx(double x, double *gh, double *gl) {
    uint64_t u = em_bits(x);
    int64_t row = ((int64_t)(u >> 52) - 1022) * 4 + (int64_t)((u >> 50) & 3);
    double c = em_double((u & 0xfffc000000000000ULL) | (1ULL << 49));
    double t = x - c;
#define p(i) ES_ERFCX[row][i] /* indexed from the table itself: a gather GCC vectorises */
    double q = p(19);
    for (int i = 18; i >= 4; i--) q = q * t + p(i);
    double a = p(2) * t, al = fma(p(2), t, -a) + p(3) * t;
    double s, sl;
    ei_fast_two_sum(p(0), a, &s, &sl); /* |c1 t| < c0 / 8 */
    ei_fast_two_sum(s, sl + (p(1) + (al + (t * t) * q)), gh, gl);
#undef p
}

/* erfc(a) = 2^k (rh + rl) for 1/2 <= a <= ES_ERFC_ZERO. */
EM_INLINE void es_erfc_dd(double a, int64_t *k, double *rh, double *rl) {
    double z = a * a, zl = fma(a, a, -z), ph, pl, gh, gl;
    em_exp_reduced(-z, k, &ph, &pl);
    pl -= ph * zl; /* exp(-z - zl) = exp(-z) (1 - zl) to 2^-88 */
    es_erfcx(a, &gh, &gl);
    *rh = ph * gh;
    *rl = fma(ph, gh, -*rh) + (ph * gl + pl * gh);
}

/* erf(x) = rh + rl for |x| < 1/2. */
EM_INLINE void es_erf_small(double x, double *rh, double *rl) {
    double z = x * x, zl = fma(x, x, -z);
    double q = -1.0 / 6894720.0 + z * (1.0 / 76204800.0 + z * (-1.0 / 918086400.0 +
               z * (1.0 / 11975040000.0 + z * (-1.0 / 168129561600.0))));
    q = 1.0 / 10.0 + z * (-1.0 / 42.0 + z * (1.0 / 216.0 + z * (-1.0 / 1320.0 +
        z * (1.0 / 9360.0 + z * (-1.0 / 75600.0 + z * (1.0 / 685440.0 + z * q))))));
    double th = z / 3.0, tl = (fma(-th, 3.0, z) + zl) / 3.0; /* z / 3 */
    double s, sl;
    ei_fast_two_sum(1.0, -th, &s, &sl);
    sl += (z * z) * q - tl; /* S = s + sl */
    double mh = ES_TWO_OVER_SQRTPI_HI * s;
    double ml = fma(ES_TWO_OVER_SQRTPI_HI, s, -mh) +
                (ES_TWO_OVER_SQRTPI_HI * sl + ES_TWO_OVER_SQRTPI_LO * s);
    *rh = x * mh;
    *rl = fma(x, mh, -*rh) + x * ml;
}

/* erf(|x|) - 1 = -erfc|x| = rh + rl for 1/2 <= |x| (clamped to ES_ERF_ONE). */
EM_INLINE void es_erfc_big(double a, double *rh, double *rl) {
    int64_t k;
    double eh, el;
    es_erfc_dd(em_select(a < ES_ERF_ONE, a, ES_ERF_ONE), &k, &eh, &el);
    *rh = em_scale(eh, k); /* k >= -53: exact */
    *rl = em_scale(el, k);
}

/* erf(a) = rh + rl for 0 <= a (erf(a) - 1 = rh + rl - 1 from erfc above 1/2). Both are
 * computed and one selected (the erfc side at 1/2 where a < 1/2, to stay in its table). */
EM_INLINE void es_erf_dd(double a, double *rh, double *rl) {
    double sh, sl, eh, el, oh, ol;
    es_erf_small(a, &sh, &sl);
    es_erfc_big(em_select(a < 0.5, 0.5, a), &eh, &el);
    ei_two_sum(1.0, -eh, &oh, &ol);
    int small = a < 0.5;
    *rh = em_select(small, sh, oh);
    *rl = em_select(small, sl, ol - el);
}

EM_INLINE double es_erf(double x) {
    double a = em_abs(x), rh, rl;
    es_erf_dd(a, &rh, &rl);
    double y = rh + rl;
    y = em_select(em_is_zero(x), a, y);
    return em_nan_or(x, em_with_sign(y, x));
}

/* The three cases computed for every x, one selected: |x| < 1/2: 1 - erf x; x <= -1/2:
 * 2 - erfc|x| (|x| clamped to ES_ERF_ONE); x >= 1/2: erfc x (x clamped to ES_ERFC_ZERO), the
 * two erfc from one es_erfc_dd (at 1/2 where |x| < 1/2, to stay in its table). */
EM_INLINE double es_erfc(double x) {
    double a = em_abs(x), ab = em_select(a < 0.5, 0.5, a), h, l, oh, ol, sh, sl;
    int neg = x < 0.0;
    double top = em_select(neg, ES_ERF_ONE, ES_ERFC_ZERO);
    int64_t k;
    es_erfc_dd(em_select(ab < top, ab, top), &k, &h, &l);
    ei_two_sum(2.0, -em_scale(h, k), &oh, &ol);
    double below = oh + (ol - em_scale(l, k));
    double above = em_scale(h + l, k);
    es_erf_small(x, &sh, &sl);
    ei_two_sum(1.0, -sh, &oh, &ol);
    double mid = oh + (ol - sl);
    return em_nan_or(x, em_select(a < 0.5, mid, em_select(neg, below, above)));
}

/* ---- erf_inv: Newton's method on erf (erfc near +-1) from Winitzki's approximation ---- */

#define ES_SQRTPI_OVER_2 0x1.c5bf891b4ef6bp-1
#define ES_SQRTPI_OVER_2_LO -0x1.618f13eb7ca89p-55

/* The correction y' - y of one Newton step for erf(y) = a (0 <= a < 1, y >= 0), with the
 * residual from es_erf_small (y < 1/2) or (1 - a) - erfc(y) (1 - a exact for a >= 1/2), so that
 * the last step is accurate to the residual's 2^-57: with split, (1 - a) - eh (exact near the
 * root) then - el; without it (float32's, whose bits the exhaustive table holds),
 * (1 - a) - (eh + el), eh + el rounded first (2^-54 erfc y). Both residuals are computed and
 * one selected (erfc at 1/2 where y < 1/2, to stay in its table). */
EM_INLINE double es_erf_inv_step(double a, double y, int split) {
    double h, l, eh, el;
    es_erf_small(y, &h, &l);
    es_erfc_big(em_select(y < 0.5, 0.5, y), &eh, &el);
    /* erf(y) - a, h - a exact near the root; or, y >= 1/2 at the root meaning a > 0.52,
     * (1 - a) - erfc(y) */
    double tail = split ? ((1.0 - a) - eh) - el : (1.0 - a) - (eh + el);
    double res = em_select(y < 0.5, (h - a) + l, tail);
    return -res * ES_SQRTPI_OVER_2 * em_exp(y * y);
}

/* float32's erf_inv: Newton's method from Winitzki's approximation, five steps (the double
 * rounded to float, elementary_more_loops.h; its bits are the exhaustive table's). */
/* y (erf_inv |x| for |x| < 1) with erf_inv's special cases and x's sign: +-inf at +-1, NaN
 * beyond and at NaN, x itself at +-0. */
EM_INLINE double es_erf_inv_specials(double x, double a, double y) {
    y = em_select(a == 1.0, INFINITY, y);
    y = em_select(a > 1.0, NAN, y);
    y = em_select(em_is_zero(x), a, y);
    return em_nan_or(x, em_with_sign(y, x));
}

EM_INLINE double es_erf_inv(double x) {
    double a = em_abs(x), ac = a < 1.0 ? a : 0.5;
    if (!(a < 1.0)) /* +-inf at +-1, NaN beyond (with x's sign), as below; fast */
        return em_nan_or(x, em_with_sign(a == 1.0 ? INFINITY : NAN, x));
    /* Winitzki: y^2 = sqrt((2/(pi b) + L/2)^2 - L/b) - (2/(pi b) + L/2), L = log(1 - a^2) */
    double b = 0.147, L = em_log1p(-ac * ac), t = 2.0 / (3.141592653589793 * b) + 0.5 * L;
    double y = sqrt(sqrt(t * t - L / b) - t);
    for (int it = 0; it < 5; it++) y += es_erf_inv_step(ac, y, 0);
    return es_erf_inv_specials(x, a, y);
}

/* ---- float64's erf_inv: a fitted start, then one Newton step ------------------------- */

/* erf_inv(a) / a for 0 <= a < 1 in three pieces of w = -log((1 - a)(1 + a)): a polynomial in
 * w - 3.125 (w < 6.25), sqrt(w) - 3.25 (w < 16), sqrt(w) - 5 (w up to 36.04 at a = 1 - 2^-53)
 * (tools/fit_erf_inv.py: least squares; max relative error 3.7e-11, 7.8e-12, 2.9e-13). */
static const double ES_ERF_INV_START[3][15] = {
    {0x1.a755e7c9782c9p+0, 0x1.ebd80d92c5dc6p-3, -0x1.8b6c31a01c6eap-8, -0x1.845748f5f6beap-11, 0x1.879bd873f8b76p-13, -0x1.d1db105aae565p-17, -0x1.6e6e7018d3d2dp-20, 0x1.c745aefb4650ap-22, -0x1.f5cc4e19cd4ddp-26, -0x1.23e44119546d4p-28, 0x1.2821bf5e806ecp-30, -0x1.37fb1e564dfdfp-35, -0x1.1699fe6982373p-36, 0x1.6b550a9cf154fp-40, 0x1.c6d23d9f6543dp-44},
    {0x1.8abcc380d9bebp+1, 0x1.0158a6d7dc8b4p+0, 0x1.5ffcf9d58e720p-8, -0x1.ebae4c8d3f013p-9, 0x1.468fc14435f3dp-9, -0x1.ba8042dcc955fp-10, 0x1.f3ae8a8311552p-11, -0x1.7602c9441eae4p-12, 0x1.a3600634c3e5bp-16, 0x1.33157681e1938p-14, -0x1.9f82f58c894adp-15, 0x1.67674bf9c46d0p-18, 0x1.76ddffc12ff12p-18, 0.0, 0.0},
    {0x1.3664ddd1ad9efp+2, 0x1.02a30d1fca060p+0, -0x1.22ea62f90d700p-13, -0x1.c2f3a28b5bb32p-13, 0x1.3ebfd8a259ebdp-14, -0x1.4a26a101a2d33p-16, 0x1.2f903eec7a2bep-18, -0x1.0d85b914b5ba3p-20, 0x1.f9e1633e80a4bp-23, -0x1.a9c29b8503a50p-25, 0x1.61a927cd440d1p-26, -0x1.f141356b67aaep-26, 0x1.c70126c393ecap-27, 0.0, 0.0},
};

/* Piece j of ES_ERF_INV_START at t, by Horner from its last (possibly zero) coefficient. */
EM_INLINE double es_erf_inv_piece(int j, double t) {
    double p = ES_ERF_INV_START[j][14];
    for (int i = 13; i >= 0; i--) p = p * t + ES_ERF_INV_START[j][i];
    return p;
}

/* The start is within 2^-34 |y| of erf_inv(a); one Newton step (es_erf_inv_step) leaves
 * about y^3 2^-68 of it, far below the step's own error (the residual's 2^-57), so the result
 * is the root rounded once more: within 1 ulp (measured: docs/numerics.md). All three pieces
 * are computed and one selected. */
EM_INLINE double es_erf_inv_f64(double x) {
    double a = em_abs(x), ac = em_select(a < 1.0, a, 0.5);
    double w = -em_log((1.0 - ac) * (1.0 + ac)), s = sqrt(w);
    double p = em_select(w < 6.25, es_erf_inv_piece(0, w - 3.125),
                         em_select(w < 16.0, es_erf_inv_piece(1, s - 3.25),
                                   es_erf_inv_piece(2, s - 5.0)));
    double y = ac * p;
    y = y + es_erf_inv_step(ac, y, 1);
    /* a < 2^-32: erf_inv(a) = a sqrt(pi)/2 (1 + pi a^2 / 12 + ...), the next term below 2^-66:
     * a times the constant in double-double, one rounding (the step's residual would be
     * rounded to the subnormal grid where y is subnormal); below 2^-960, on a scaled by 2^108
     * and scaled back (exact for a normal result; a subnormal one rounds once more, from a
     * value within 2^-52 relative), so that the low product does not round on that grid */
    double big = ac * 0x1p108;
    double tiny = fma(big, ES_SQRTPI_OVER_2, big * ES_SQRTPI_OVER_2_LO) * 0x1p-108;
    tiny = em_select(ac < 0x1p-960, tiny, fma(ac, ES_SQRTPI_OVER_2, ac * ES_SQRTPI_OVER_2_LO));
    y = em_select(ac < 0x1p-32, tiny, y);
    return es_erf_inv_specials(x, a, y);
}

#endif
