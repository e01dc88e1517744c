#pragma once
// Small dense linear algebra for one-time analyses (InfiniGen's SVD of the prompt queries):
// fp64, O(n^3), meant for n up to a few hundred (a head dimension), not for hot paths.
#include <vector>

namespace hb::cpu {

// Eigen-decomposition of the symmetric n x n matrix `a` (row-major) by cyclic Jacobi
// rotations. Returns eigenvalues in descending order and the matching orthonormal
// eigenvectors as the columns of `vectors` (row-major n x n: vectors[i * n + k] is component
// i of eigenvector k). The right singular vectors of X are the eigenvectors of X^T X.
void symmetric_eigen(int n, const std::vector<double>& a, std::vector<double>& values,
                     std::vector<double>& vectors);

}  // namespace hb::cpu
