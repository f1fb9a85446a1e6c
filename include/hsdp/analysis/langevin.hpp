// Closed forms of Chourasia, Ye, Shokri 2021, "Differential Privacy Dynamics of Langevin
// Diffusion and Noisy Gradient Descent" (papers/chourasia-ye-shokri-2021-langevin-noisy-gd.txt,
// "langevin"), for noisy full-batch GD (Alg. 1):
//
//     th_{k+1} = P_C(th_k - eta grad L_D(th_k) + sqrt(2 eta) sigma Z_k),   k = 0..K-1.
//
// All functions take the paper's own parameters: alpha > 1 (Rényi order), the total gradient
// sensitivity S_g = max ||sum_i grad l(th; x_i) - sum_i grad l(th; x'_i)|| (Def. B.10; S_g <= 2L
// for L-Lipschitz losses under replace-one), n, the paper's sigma (noise std sqrt(2 eta) sigma
// in parameter space), eta, K. The analyses `langevin` and `langevin-lower` (src/analysis/
// langevin.cpp) map a Run onto them. Text damaged by OCR in the paper (Thm 2, Cor. 2, Thm 3)
// is reconstructed from the derivation; see docs/analyses/langevin.md. Invalid arguments
// throw InvalidArgument naming the parameter.
#pragma once

#include <cstdint>

namespace hsdp::langevin {

/// Thm 2 (eq. (16)) for an LSI constant c in the convention of (11) read as
/// Ent(f^2) <= (2/c) E||grad f||^2 (a Gaussian N(m, v I) has c = 1/v):
///   eps = alpha S_g^2 / (2 c sigma^4 n^2) * (1 - exp(-c sigma^2 eta K)).
/// The PDE (15) with gamma = 1/2, solved exactly (R = alpha g(t) along its characteristics).
double thm2_rdp(double alpha, double sensitivity, double n, double sigma, double eta, double K,
                double lsi_c);

/// Lemma 5: the LSI constant of the tracing diffusions for a lambda-strongly convex beta-smooth
/// loss with eta <= 1/beta: c = lambda / (2 sigma^2).
double lemma5_lsi_constant(double lambda, double sigma);

/// Cor. 1 (legible; also the Fig. 1 caption) = Thm 2 with Lemma 5's c:
///   eps = alpha S_g^2 / (lambda sigma^2 n^2) * (1 - exp(-lambda eta K / 2)).
double cor1_rdp(double alpha, double sensitivity, double n, double sigma, double eta, double K,
                double lambda);

/// Cor. 2 (eq. (18), reconstructed) for the squared loss l(th; x) = ||th - x||^2 / 2 on R^d,
/// any start, 0 < eta < 2: Thm 2 with c = (2 - eta) / (2 sigma^2):
///   eps = alpha S_g^2 / ((2 - eta) sigma^2 n^2) * (1 - exp(-(2 - eta) eta K / 2)).
double cor2_rdp(double alpha, double sensitivity, double n, double sigma, double eta, double K);

/// Thm 3 (eq. (17), reconstructed): on the squared-loss construction with start 0 and
/// 0 < eta < 1 the last iterate's Rényi divergence is at least
///   alpha S_g^2 / (4 sigma^2 n^2) * (1 - exp(-eta K)).
double thm3_lower_rdp(double alpha, double sensitivity, double n, double sigma, double eta,
                      double K);

/// The exact Rényi divergence of the last iterates on the squared-loss construction
/// (Gaussians with the same covariance; Sec. 4): alpha S_g^2 (2 - eta) / (4 sigma^2 n^2) *
/// (1 - q^K) / (1 + q^K), q = 1 - eta, for 0 < eta < 2.
double squared_loss_exact_rdp(double alpha, double sensitivity, double n, double sigma,
                              double eta, double K);

/// The composition baseline of the Fig. 1 caption (moments accountant, App. E): every
/// iterate released, eps = alpha S_g^2 / (4 sigma^2 n^2) * eta K.
double composition_rdp(double alpha, double sensitivity, double n, double sigma, double eta,
                       double K);

/// Thm 4 (privacy half): the smallest sigma^2 for which Cor. 1 gives (alpha, eps_rdp)-RDP
/// after any number of steps: sigma^2 = alpha S_g^2 / (lambda eps_rdp n^2) (Cor. 1 is
/// increasing in K with this limit). With S_g = 2L: 4 alpha L^2 / (lambda eps_rdp n^2).
double thm4_sigma2(double alpha, double eps_rdp, double sensitivity, double n, double lambda);

/// The largest number of steps K >= 0 for which Cor. 1 stays <= eps_rdp at this sigma; +inf
/// when the limit alpha S_g^2/(lambda sigma^2 n^2) itself is <= eps_rdp. Rounded down (the
/// returned K is verified against cor1_rdp).
double cor1_max_steps(double alpha, double eps_rdp, double sensitivity, double n, double sigma,
                      double eta, double lambda);

/// Thm 4 for an (eps, delta)-DP target: the smallest sigma^2 at which the limit of Cor. 1,
/// the curve alpha rho with rho = S_g^2 / (lambda sigma^2 n^2), converts (best RDP -> DP
/// conversion, div::best_epsilon) to at most eps at delta -- for every number of steps.
/// Tighter than the paper's closed form (which goes through Mironov's conversion); the
/// returned value is verified against the conversion and rounded towards more noise.
double thm4_sigma2_dp(double epsilon, double delta, double sensitivity, double n, double lambda);

/// Lemma 6 (eq. (20); its printed statement is OCR-damaged, re-derived in
/// docs/analyses/langevin.md): for a lambda-strongly convex beta-smooth loss whose minimiser
/// th* lies in the interior of C, eta <= 2/(lambda + beta), noise sqrt(2 eta) sigma N(0, I_d):
///   E[L(th_K) - L(th*)] <= (beta/2) [ (1 - eta lambda)^{2K} r0 + 2 d sigma^2 / (lambda (2 - eta lambda)) ],
/// r0 = E||th_0 - th*||^2.
double lemma6_excess_risk(double K, double eta, double lambda, double beta, double d,
                          double sigma, double r0);

/// Thm 4's K*: the smallest K at which the start's term of Lemma 6 is at most its noise
/// floor (so the bound is within a factor 2 of its limit); 0 when r0 is already below it.
double thm4_steps(double eta, double lambda, double d, double sigma, double r0);

}  // namespace hsdp::langevin
