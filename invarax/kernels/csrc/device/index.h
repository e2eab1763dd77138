/* index.h - the index arithmetic of gathers, scatters and dynamic slices, written once as
 * portable C for the GPU's kernels (NVRTC: index.cu) and the host (gcc: the tests compare it
 * with the CPU's ops bit for bit). No float arithmetic: these only move values.
 *
 * idx_rows_SFX: an index vector's row in the merged indexed axes, each index clamped into
 *   its axis, in int64 (the CPU's gather_rows: row = row * d + clip(col, 0, d - 1), over the
 *   axes in order; a vector is in bounds when every 0 <= col < d). With drop, a vector out
 *   of bounds gets row -1 (a gather fills it, a scatter drops its update).
 * idx_clamp_start: a dynamic slice's start moved into [0, dim - size] (the CPU's
 *   clamped_starts), from its value as int64 (a uint64 start above INT64_MAX reads as
 *   negative: `is_unsigned` says it is large).
 * idx_take_SFX / idx_window_SFX: one unit of a value moved (an element is `e` units of type
 *   SFX, so any dtype moves as its bytes). */
#ifndef INVARAX_INDEX_H
#define INVARAX_INDEX_H

#include "order.h" /* ORD_FN, int64_t */

/* The most axes a dynamic slice's description holds. */
#define IDX_MAX_RANK 8
/* The fields of a dynamic slice's description (int64): the rank, then IDX_MAX_RANK each of
 * the big array's shape, the window's sizes, the big array's strides (in elements), and a
 * bit mask of the axes whose start is unsigned 64-bit. */
enum { IDX_RANK = 0, IDX_SHAPE = 1, IDX_SIZE = 1 + IDX_MAX_RANK, IDX_STRIDE = 1 + 2 * IDX_MAX_RANK,
       IDX_UNSIGNED = 1 + 3 * IDX_MAX_RANK, IDX_DESC = 2 + 3 * IDX_MAX_RANK };

ORD_FN int64_t idx_clamp_start(int64_t s, int64_t dim, int64_t size, int is_unsigned) {
    const int64_t high = dim - size;
    if (s < 0) return is_unsigned ? high : 0;
    return s > high ? high : s;
}

/* IDX_ROWS_DEFINE(T, SFX) defines idx_rows_SFX(i, idx, dims, k, rows, drop): rows[i] for the
 * index vector idx[i * k : i * k + k] (contiguous) into axes of sizes dims[0 : k]. */
#define IDX_ROWS_DEFINE(T, SFX)                                                             \
    ORD_FN void idx_rows_##SFX(int64_t i, const T *idx, const int64_t *dims, int64_t k,     \
                               int64_t *rows, int drop) {                                   \
        int64_t row = 0;                                                                    \
        int valid = 1;                                                                      \
        for (int64_t j = 0; j < k; j++) {                                                   \
            const int64_t col = (int64_t)idx[i * k + j], d = dims[j];                       \
            const int64_t high = d > 0 ? d - 1 : 0;                                         \
            valid &= col >= 0 && col < d;                                                   \
            row = row * d + (col < 0 ? 0 : col > high ? high : col);                        \
        }                                                                                   \
        rows[i] = drop && !valid ? -1 : row;                                                \
    }

IDX_ROWS_DEFINE(int8_t, i8)
IDX_ROWS_DEFINE(uint8_t, u8)
IDX_ROWS_DEFINE(int16_t, i16)
IDX_ROWS_DEFINE(uint16_t, u16)
IDX_ROWS_DEFINE(int32_t, i32)
IDX_ROWS_DEFINE(uint32_t, u32)
IDX_ROWS_DEFINE(int64_t, i64)
IDX_ROWS_DEFINE(uint64_t, u64)

/* IDX_MOVE_DEFINE(U, SFX) defines, for values moved as units of type U:
 * idx_take_SFX(t, src, rows, fill, dst, w, e): unit t of the rows gathered from src (rows of
 *   w units each, contiguous): dst[t] = src[rows[t / w] * w + t % w], or the fill value's
 *   unit (an element of e units) where that row is -1;
 * idx_window_SFX(t, big, small, desc, starts, e, update): unit t of the window (contiguous,
 *   C order) of the big array at the clamped starts (desc: IDX_* above): small[t] = big[...]
 *   (a dynamic slice), or with update big[...] = small[t] (a dynamic update slice). */
#define IDX_MOVE_DEFINE(U, SFX)                                                             \
    ORD_FN void idx_take_##SFX(int64_t t, const U *src, const int64_t *rows, const U *fill, \
                               U *dst, int64_t w, int64_t e) {                              \
        const int64_t row = rows[t / w], c = t % w;                                         \
        dst[t] = row < 0 ? fill[c % e] : src[row * w + c];                                  \
    }                                                                                       \
    ORD_FN void idx_window_##SFX(int64_t t, U *big, U *small, const int64_t *desc,          \
                                 const int64_t *starts, int64_t e, int update) {            \
        int64_t j = t / e, offset = 0;                                                      \
        for (int64_t a = desc[IDX_RANK] - 1; a >= 0; a--) {                                 \
            const int64_t size = desc[IDX_SIZE + a];                                        \
            const int64_t start = idx_clamp_start(starts[a], desc[IDX_SHAPE + a], size,     \
                                                  (int)(desc[IDX_UNSIGNED] >> a & 1));      \
            offset += (start + j % size) * desc[IDX_STRIDE + a];                            \
            j /= size;                                                                      \
        }                                                                                   \
        U *at = big + offset * e + t % e;                                                   \
        if (update) *at = small[t];                                                         \
        else small[t] = *at;                                                                \
    }

IDX_MOVE_DEFINE(uint8_t, u8)
IDX_MOVE_DEFINE(uint16_t, u16)
IDX_MOVE_DEFINE(uint32_t, u32)
IDX_MOVE_DEFINE(uint64_t, u64)

#endif
