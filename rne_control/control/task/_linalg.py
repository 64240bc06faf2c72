"""Small dense linear algebra for the task-space kernel, in loops: the matrices are at most a robot's joint
count wide, and numba compiles loops far faster than its LAPACK wrappers (which also allocate per call).

- :func:`cholesky`: A = L L^T of a symmetric positive definite A (Golub & Van Loan, Alg. 4.2.1);
- :func:`spd_inverse`: A^-1 = L^-T L^-1, keeping L and L^-1;
- :func:`smallest_eigenvalue`: of a symmetric positive definite A, by inverse iteration from the last
  cycle's eigenvector (Golub & Van Loan, §8.2.2), the Rayleigh quotient of two steps;
- :func:`jacobi_eigh`: the eigenvalues (ascending) and eigenvectors of a symmetric A by cyclic Jacobi
  rotations (Golub & Van Loan, Alg. 8.5.3), to round-off; warm-started from the eigenvectors of a nearby
  matrix (the last cycle's), A is nearly diagonal in their basis and one or two sweeps finish it.
"""
import math

from numba import njit

JACOBI_SWEEPS = 30
JACOBI_TOL = 1e-24     # stop when the off-diagonal's squared norm is below this fraction of the matrix's (eigenvalues then
                       # to about 1e-24 relative: the error is second order in the off-diagonal)


@njit(cache=True, nogil=True, error_model="numpy")
def cholesky(A, L):
    """L (lower triangular, the rest zero) with A = L L^T. Returns False if A is not positive definite."""
    n = A.shape[0]
    for j in range(n):
        s = A[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if not s > 0.0:
            return False
        d = math.sqrt(s)
        L[j, j] = d
        for i in range(j + 1, n):
            s = A[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = s / d
        for i in range(j):
            L[i, j] = 0.0
    return True


@njit(cache=True, nogil=True, error_model="numpy")
def spd_inverse(A, L, Li, out):
    """out = A^-1 = L^-T L^-1 of a symmetric positive definite A, with its Cholesky factor L and L^-1 (lower
    triangular) written into ``L`` and ``Li``. Returns False if A is not positive definite."""
    n = A.shape[0]
    if not cholesky(A, L):
        return False
    for j in range(n):              # L^-1, column by column (forward substitution)
        for i in range(j):
            Li[i, j] = 0.0
        Li[j, j] = 1.0 / L[j, j]
        for i in range(j + 1, n):
            s = 0.0
            for k in range(j, i):
                s -= L[i, k] * Li[k, j]
            Li[i, j] = s / L[i, i]
    for i in range(n):              # A^-1 = L^-T L^-1
        for j in range(i + 1):
            s = 0.0
            for k in range(i, n):
                s += Li[k, i] * Li[k, j]
            out[i, j] = out[j, i] = s
    return True


@njit(cache=True, nogil=True, error_model="numpy")
def _orthonormalize(V):
    """Modified Gram-Schmidt on the columns of V (in place): keeps a warm start's basis orthonormal."""
    n = V.shape[0]
    for j in range(n):
        for k in range(j):
            d = 0.0
            for i in range(n):
                d += V[i, k] * V[i, j]
            for i in range(n):
                V[i, j] -= d * V[i, k]
        d = 0.0
        for i in range(n):
            d += V[i, j] * V[i, j]
        d = math.sqrt(d)
        for i in range(n):
            V[i, j] /= d


@njit(cache=True, nogil=True, error_model="numpy")
def jacobi_eigh(A, w, V, warm, T):
    """Eigenvalues w (ascending) and eigenvectors V (columns) of the symmetric A, which is overwritten; returns
    the number of sweeps. With
    ``warm`` V holds an orthonormal basis to start from (the eigenvectors of a nearby matrix): A is first
    taken to it, A <- V^T A V (T: a work matrix). Else V starts as the identity."""
    n = A.shape[0]
    if warm:
        _orthonormalize(V)
        for i in range(n):                  # T = A V
            for j in range(n):
                s = 0.0
                for k in range(n):
                    s += A[i, k] * V[k, j]
                T[i, j] = s
        for i in range(n):                  # A = V^T T
            for j in range(i, n):
                s = 0.0
                for k in range(n):
                    s += V[k, i] * T[k, j]
                A[i, j] = A[j, i] = s
    else:
        for i in range(n):
            for j in range(n):
                V[i, j] = 1.0 if i == j else 0.0
    scale = 0.0
    for i in range(n):
        for j in range(n):
            scale += A[i, j] * A[i, j]
    sweeps = 0
    for _ in range(JACOBI_SWEEPS):
        off = 0.0
        for i in range(n):
            for j in range(i + 1, n):
                off += A[i, j] * A[i, j]
        if off <= JACOBI_TOL * scale:
            break
        sweeps += 1
        for p in range(n - 1):
            for q in range(p + 1, n):
                apq = A[p, q]
                if apq * apq <= 1e-36 * scale:      # already negligible: no rotation
                    continue
                theta = 0.5 * (A[q, q] - A[p, p]) / apq
                t = (1.0 if theta >= 0.0 else -1.0) / (abs(theta) + math.sqrt(theta * theta + 1.0))
                c = 1.0 / math.sqrt(t * t + 1.0)
                s = t * c
                for k in range(n):          # A <- A G (columns p, q)
                    akp, akq = A[k, p], A[k, q]
                    A[k, p], A[k, q] = c * akp - s * akq, s * akp + c * akq
                for k in range(n):          # A <- G^T A (rows p, q)
                    apk, aqk = A[p, k], A[q, k]
                    A[p, k], A[q, k] = c * apk - s * aqk, s * apk + c * aqk
                for k in range(n):
                    vkp, vkq = V[k, p], V[k, q]
                    V[k, p], V[k, q] = c * vkp - s * vkq, s * vkp + c * vkq
    for i in range(n):
        w[i] = A[i, i]
    for i in range(1, n):                   # sort ascending (insertion), columns of V along
        j = i
        while j > 0 and w[j - 1] > w[j]:
            w[j - 1], w[j] = w[j], w[j - 1]
            for k in range(n):
                V[k, j - 1], V[k, j] = V[k, j], V[k, j - 1]
            j -= 1
    return sweeps


@njit(cache=True, nogil=True, error_model="numpy")
def smallest_eigenvalue(A, v, L, steps):
    """The smallest eigenvalue of the symmetric positive definite A by ``steps`` of inverse iteration from v
    (the last one's eigenvector, unit; updated), L a work matrix: x <- A^-1 v / |A^-1 v|, then v^T A v. Near
    the smallest eigenvalue A^-1 amplifies its eigenvector by the ratio of the next eigenvalue to it, so
    from a nearby start two steps reach round-off where it matters (a small eigenvalue); where two are
    close, any vector of their plane has a Rayleigh quotient between them. NaN if A is not positive definite
    (the caller then takes the full eigensolver)."""
    n = A.shape[0]
    if not cholesky(A, L):
        return math.nan
    for _ in range(steps):
        for i in range(n):                  # L y = v
            s = v[i]
            for k in range(i):
                s -= L[i, k] * v[k]
            v[i] = s / L[i, i]
        for i in range(n - 1, -1, -1):      # L^T x = y
            s = v[i]
            for k in range(i + 1, n):
                s -= L[k, i] * v[k]
            v[i] = s / L[i, i]
        nrm = 0.0
        for i in range(n):
            nrm += v[i] * v[i]
        nrm = math.sqrt(nrm)
        for i in range(n):
            v[i] /= nrm
    lam = 0.0
    for i in range(n):
        s = 0.0
        for k in range(n):
            s += A[i, k] * v[k]
        lam += v[i] * s
    return lam
