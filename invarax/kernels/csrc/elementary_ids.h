/* elementary_ids.h - the numbers of the elementary functions of one operand (ELEM_*) and of
 * two (ELEM2_*): native.h's entry points take them, the GPU's kernels too. */
#ifndef INVARAX_ELEMENTARY_IDS_H
#define INVARAX_ELEMENTARY_IDS_H

enum {
    ELEM_EXP = 0, ELEM_LOG, ELEM_EXPM1, ELEM_LOG1P, ELEM_TANH, ELEM_LOGISTIC, ELEM_SIN, ELEM_COS,
    ELEM_EXP2, ELEM_SINH, ELEM_COSH,
    /* elementary_more.c */
    ELEM_LOG2, ELEM_LOG10, ELEM_ASINH, ELEM_ACOSH, ELEM_ATANH, ELEM_ATAN, ELEM_ASIN, ELEM_ACOS,
    ELEM_TAN, ELEM_CBRT, ELEM_ERF, ELEM_ERFC, ELEM_ERF_INV,
    /* elementary_gamma.c */
    ELEM_LGAMMA, ELEM_DIGAMMA, ELEM_COUNT
};

enum { ELEM2_ATAN2 = 0, ELEM2_POW, ELEM2_COUNT };

#endif
