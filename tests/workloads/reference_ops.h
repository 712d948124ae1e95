// Plain C++ reference operators for the workload suite: nested loops over
// row-major std::vector<float>, written from the operators' mathematical
// definitions (not from the compute definitions), accumulating in double.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace kiln::ir::reference {

using Vec = std::vector<float>;

inline int64_t ConvOut(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dil) {
  return (in + 2 * pad - dil * (k - 1) - 1) / stride + 1;
}

// in (N, L, CI), w (K, CI/g, CO) -> (N, OL, CO).
inline Vec Conv1dNLC(const Vec& in, const Vec& w, int64_t N, int64_t L, int64_t CI, int64_t CO,
                     int64_t K, int64_t stride, int64_t pad, int64_t dil, int64_t groups) {
  int64_t OL = ConvOut(L, K, stride, pad, dil), cpg = CI / groups, ocpg = CO / groups;
  Vec out(N * OL * CO);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ol = 0; ol < OL; ++ol)
      for (int64_t co = 0; co < CO; ++co) {
        double acc = 0;
        int64_t g = co / ocpg;
        for (int64_t k = 0; k < K; ++k) {
          int64_t il = ol * stride + k * dil - pad;
          if (il < 0 || il >= L) continue;
          for (int64_t c = 0; c < cpg; ++c) {
            acc += double(in[(n * L + il) * CI + g * cpg + c]) * w[(k * cpg + c) * CO + co];
          }
        }
        out[(n * OL + ol) * CO + co] = float(acc);
      }
  return out;
}

// in (N, H, W, CI), w (K, K, CI/g, CO) -> (N, OH, OW, CO).
inline Vec Conv2dNHWC(const Vec& in, const Vec& w, int64_t N, int64_t H, int64_t W, int64_t CI,
                      int64_t CO, int64_t K, int64_t stride, int64_t pad, int64_t dil,
                      int64_t groups) {
  int64_t OH = ConvOut(H, K, stride, pad, dil), OW = ConvOut(W, K, stride, pad, dil);
  int64_t cpg = CI / groups, ocpg = CO / groups;
  Vec out(N * OH * OW * CO);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow)
        for (int64_t co = 0; co < CO; ++co) {
          double acc = 0;
          int64_t g = co / ocpg;
          for (int64_t kh = 0; kh < K; ++kh)
            for (int64_t kw = 0; kw < K; ++kw) {
              int64_t ih = oh * stride + kh * dil - pad, iw = ow * stride + kw * dil - pad;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              for (int64_t c = 0; c < cpg; ++c) {
                acc += double(in[((n * H + ih) * W + iw) * CI + g * cpg + c]) *
                       w[((kh * K + kw) * cpg + c) * CO + co];
              }
            }
          out[((n * OH + oh) * OW + ow) * CO + co] = float(acc);
        }
  return out;
}

// in (N, D, H, W, CI), w (K, K, K, CI/g, CO) -> (N, OD, OH, OW, CO).
inline Vec Conv3dNDHWC(const Vec& in, const Vec& w, int64_t N, int64_t D, int64_t H, int64_t W,
                       int64_t CI, int64_t CO, int64_t K, int64_t stride, int64_t pad, int64_t dil,
                       int64_t groups) {
  int64_t OD = ConvOut(D, K, stride, pad, dil), OH = ConvOut(H, K, stride, pad, dil),
          OW = ConvOut(W, K, stride, pad, dil);
  int64_t cpg = CI / groups, ocpg = CO / groups;
  Vec out(N * OD * OH * OW * CO);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t od = 0; od < OD; ++od)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow)
          for (int64_t co = 0; co < CO; ++co) {
            double acc = 0;
            int64_t g = co / ocpg;
            for (int64_t kd = 0; kd < K; ++kd)
              for (int64_t kh = 0; kh < K; ++kh)
                for (int64_t kw = 0; kw < K; ++kw) {
                  int64_t id = od * stride + kd * dil - pad, ih = oh * stride + kh * dil - pad,
                          iw = ow * stride + kw * dil - pad;
                  if (id < 0 || id >= D || ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                  for (int64_t c = 0; c < cpg; ++c) {
                    acc += double(in[(((n * D + id) * H + ih) * W + iw) * CI + g * cpg + c]) *
                           w[(((kd * K + kh) * K + kw) * cpg + c) * CO + co];
                  }
                }
            out[(((n * OD + od) * OH + oh) * OW + ow) * CO + co] = float(acc);
          }
  return out;
}

// in (N, H, W, C), w (1, K, K, C) -> (N, OH, OW, C).
inline Vec DepthwiseConv2dNHWC(const Vec& in, const Vec& w, int64_t N, int64_t H, int64_t W,
                               int64_t C, int64_t K, int64_t stride, int64_t pad, int64_t dil) {
  int64_t OH = ConvOut(H, K, stride, pad, dil), OW = ConvOut(W, K, stride, pad, dil);
  Vec out(N * OH * OW * C);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow)
        for (int64_t c = 0; c < C; ++c) {
          double acc = 0;
          for (int64_t kh = 0; kh < K; ++kh)
            for (int64_t kw = 0; kw < K; ++kw) {
              int64_t ih = oh * stride + kh * dil - pad, iw = ow * stride + kw * dil - pad;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              acc += double(in[((n * H + ih) * W + iw) * C + c]) * w[(kh * K + kw) * C + c];
            }
          out[((n * OH + oh) * OW + ow) * C + c] = float(acc);
        }
  return out;
}

// Transposed convolution: every input pixel (ih, iw) scatters in * w[kh, kw]
// to output (ih * stride + kh - pad, iw * stride + kw - pad).
// in (N, H, W, CI), w (K, K, CI, CO) -> (N, (H-1)*s - 2p + K, ..., CO).
inline Vec Conv2dTransposeNHWC(const Vec& in, const Vec& w, int64_t N, int64_t H, int64_t W,
                               int64_t CI, int64_t CO, int64_t K, int64_t stride, int64_t pad) {
  int64_t OH = (H - 1) * stride - 2 * pad + K, OW = (W - 1) * stride - 2 * pad + K;
  std::vector<double> acc(N * OH * OW * CO, 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ih = 0; ih < H; ++ih)
      for (int64_t iw = 0; iw < W; ++iw)
        for (int64_t kh = 0; kh < K; ++kh)
          for (int64_t kw = 0; kw < K; ++kw) {
            int64_t oh = ih * stride + kh - pad, ow = iw * stride + kw - pad;
            if (oh < 0 || oh >= OH || ow < 0 || ow >= OW) continue;
            for (int64_t ci = 0; ci < CI; ++ci)
              for (int64_t co = 0; co < CO; ++co) {
                acc[((n * OH + oh) * OW + ow) * CO + co] +=
                    double(in[((n * H + ih) * W + iw) * CI + ci]) *
                    w[((kh * K + kw) * CI + ci) * CO + co];
              }
          }
  return Vec(acc.begin(), acc.end());
}

// Capsule convolution: each pixel holds a cs x cs pose matrix per channel;
// out[.., i, j, co] = sum over window, k, ci of in[.., i, k, ci] * w[.., k, j, ci, co].
inline Vec Conv2dCapsuleNHWIJC(const Vec& in, const Vec& w, int64_t N, int64_t H, int64_t W,
                               int64_t CI, int64_t CO, int64_t K, int64_t stride, int64_t pad,
                               int64_t cs) {
  int64_t OH = (H + 2 * pad - K) / stride + 1, OW = (W + 2 * pad - K) / stride + 1;
  Vec out(N * OH * OW * cs * cs * CO);
  auto in_at = [&](int64_t n, int64_t h, int64_t x, int64_t i, int64_t j, int64_t c) {
    return in[((((n * H + h) * W + x) * cs + i) * cs + j) * CI + c];
  };
  auto w_at = [&](int64_t kh, int64_t kw, int64_t i, int64_t j, int64_t ci, int64_t co) {
    return w[((((kh * K + kw) * cs + i) * cs + j) * CI + ci) * CO + co];
  };
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow)
        for (int64_t ci_ = 0; ci_ < cs; ++ci_)
          for (int64_t cj = 0; cj < cs; ++cj)
            for (int64_t co = 0; co < CO; ++co) {
              double acc = 0;
              for (int64_t kh = 0; kh < K; ++kh)
                for (int64_t kw = 0; kw < K; ++kw) {
                  int64_t ih = oh * stride + kh - pad, iw = ow * stride + kw - pad;
                  if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                  for (int64_t ck = 0; ck < cs; ++ck)
                    for (int64_t c = 0; c < CI; ++c) {
                      acc += double(in_at(n, ih, iw, ci_, ck, c)) * w_at(kh, kw, ck, cj, c, co);
                    }
                }
              out[((((n * OH + oh) * OW + ow) * cs + ci_) * cs + cj) * CO + co] = float(acc);
            }
  return out;
}

// relu((conv2d_nhwc(data, kernel) + bias) * bn_scale + bn_offset), per channel.
inline Vec Conv2dNHWCBnRelu(const Vec& data, const Vec& kernel, const Vec& bias,
                            const Vec& bn_offset, const Vec& bn_scale, int64_t N, int64_t H,
                            int64_t W, int64_t CI, int64_t CO, int64_t K, int64_t stride,
                            int64_t pad, int64_t dil) {
  Vec out = Conv2dNHWC(data, kernel, N, H, W, CI, CO, K, stride, pad, dil, 1);
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t c = static_cast<int64_t>(i) % CO;
    float v = (out[i] + bias[c]) * bn_scale[c] + bn_offset[c];
    out[i] = std::max(v, 0.0f);
  }
  return out;
}

// x (N, CI, H, W), w (CO, CI, KH, KW) -> (N, CO, OH, OW).
inline Vec Conv2dNCHW(const Vec& x, const Vec& w, int64_t N, int64_t H, int64_t W, int64_t CI,
                      int64_t CO, int64_t KH, int64_t KW, int64_t stride, int64_t pad,
                      int64_t dil) {
  int64_t OH = ConvOut(H, KH, stride, pad, dil), OW = ConvOut(W, KW, stride, pad, dil);
  Vec out(N * CO * OH * OW);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t co = 0; co < CO; ++co)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = 0;
          for (int64_t ci = 0; ci < CI; ++ci)
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                int64_t ih = oh * stride + kh * dil - pad, iw = ow * stride + kw * dil - pad;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc += double(x[((n * CI + ci) * H + ih) * W + iw]) *
                       w[((co * CI + ci) * KH + kh) * KW + kw];
              }
          out[((n * CO + co) * OH + oh) * OW + ow] = float(acc);
        }
  return out;
}

// x (B, N, K), y (B, K, M) -> (B, N, M).
inline Vec BatchMatmul(const Vec& x, const Vec& y, int64_t B, int64_t N, int64_t M, int64_t K) {
  Vec out(B * N * M);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < N; ++i)
      for (int64_t j = 0; j < M; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc += double(x[(b * N + i) * K + k]) * y[(b * K + k) * M + j];
        out[(b * N + i) * M + j] = float(acc);
      }
  return out;
}

// query, value (B, L, Hd, D) -> scores (B, Hd, L, L): q[b, i, h, :] · v[b, j, h, :].
inline Vec TransposeBatchMatmul(const Vec& q, const Vec& v, int64_t B, int64_t L, int64_t Hd,
                                int64_t D) {
  Vec out(B * Hd * L * L);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hd; ++h)
      for (int64_t i = 0; i < L; ++i)
        for (int64_t j = 0; j < L; ++j) {
          double acc = 0;
          for (int64_t d = 0; d < D; ++d) {
            acc += double(q[((b * L + i) * Hd + h) * D + d]) * v[((b * L + j) * Hd + h) * D + d];
          }
          out[((b * Hd + h) * L + i) * L + j] = float(acc);
        }
  return out;
}

// a (N, K), b (K, M) -> (N, M).
inline Vec Matmul(const Vec& a, const Vec& b, int64_t N, int64_t M, int64_t K) {
  return BatchMatmul(a, b, 1, N, M, K);
}

inline Vec Relu(Vec x) {
  for (auto& v : x) v = std::max(v, 0.0f);
  return x;
}

// a (M, K), b (N, K) -> (M, N) = a · bᵀ.
inline Vec GemvNT(const Vec& a, const Vec& b, int64_t M, int64_t N, int64_t K) {
  Vec out(M * N);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += double(a[i * K + k]) * b[j * K + k];
      out[i * N + j] = float(acc);
    }
  return out;
}

// a (B, M, N) -> (B): Frobenius norm of each matrix.
inline Vec NormBMN(const Vec& a, int64_t B, int64_t M, int64_t N) {
  Vec out(B);
  for (int64_t b = 0; b < B; ++b) {
    double acc = 0;
    for (int64_t i = 0; i < M * N; ++i) acc += double(a[b * M * N + i]) * a[b * M * N + i];
    out[b] = float(std::sqrt(acc));
  }
  return out;
}

// x (R, H), w (H) -> x * w / sqrt(mean(x^2) + eps), row by row.
inline Vec RmsNorm(const Vec& x, const Vec& w, int64_t R, int64_t Hd, double eps) {
  Vec out(R * Hd);
  for (int64_t r = 0; r < R; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < Hd; ++i) ss += double(x[r * Hd + i]) * x[r * Hd + i];
    double scale = 1.0 / std::sqrt(ss / double(Hd) + eps);
    for (int64_t i = 0; i < Hd; ++i) out[r * Hd + i] = float(x[r * Hd + i] * scale * w[i]);
  }
  return out;
}

// Softmax of a row-major tensor over `axis` (shape given, axis non-negative).
inline Vec Softmax(const Vec& x, const std::vector<int64_t>& shape, int axis) {
  int64_t outer = 1, inner = 1, n = shape[axis];
  for (int i = 0; i < axis; ++i) outer *= shape[i];
  for (size_t i = axis + 1; i < shape.size(); ++i) inner *= shape[i];
  Vec out(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      auto at = [&](int64_t k) { return (o * n + k) * inner + in; };
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < n; ++k) m = std::max(m, double(x[at(k)]));
      double s = 0;
      for (int64_t k = 0; k < n; ++k) s += std::exp(double(x[at(k)]) - m);
      for (int64_t k = 0; k < n; ++k) out[at(k)] = float(std::exp(double(x[at(k)]) - m) / s);
    }
  return out;
}

}  // namespace kiln::ir::reference
