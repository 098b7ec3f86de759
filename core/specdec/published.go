package specdec

// PublishedRow is one row of Leviathan, Kalman and Matias's Table 4
// (ICML 2023, https://arxiv.org/abs/2211.17192, appendix A.3): T5-XXL (11B)
// with an off-the-shelf T5 draft, batch 1, one TPU-v4. Alpha, Gamma and
// Measured are their Table 2; C (their profiler estimate) and Expected
// (Theorem 3.8 at that C) are Table 4's added columns.
type PublishedRow struct {
	Task, Draft string
	Temp        int // sampling temperature: 0 argmax, 1 standard sampling
	Gamma       int
	Alpha, C    float64
	// Expected is the paper's Theorem 3.8 figure, Measured its walltime
	// improvement over T5X, both as printed (one decimal).
	Expected, Measured float64
}

// LeviathanTable4 are the twelve rows, in the paper's order.
var LeviathanTable4 = []PublishedRow{
	{"EnDe", "T5-small", 0, 7, 0.75, 0.02, 3.2, 3.4},
	{"EnDe", "T5-base", 0, 7, 0.80, 0.04, 3.3, 2.8},
	{"EnDe", "T5-large", 0, 7, 0.82, 0.11, 2.5, 1.7},
	{"EnDe", "T5-small", 1, 7, 0.62, 0.02, 2.3, 2.6},
	{"EnDe", "T5-base", 1, 5, 0.68, 0.04, 2.4, 2.4},
	{"EnDe", "T5-large", 1, 3, 0.71, 0.11, 2.0, 1.4},
	{"CNNDM", "T5-small", 0, 5, 0.65, 0.02, 2.4, 3.1},
	{"CNNDM", "T5-base", 0, 5, 0.73, 0.04, 2.6, 3.0},
	{"CNNDM", "T5-large", 0, 3, 0.74, 0.11, 2.0, 2.2},
	{"CNNDM", "T5-small", 1, 5, 0.53, 0.02, 1.9, 2.3},
	{"CNNDM", "T5-base", 1, 3, 0.55, 0.04, 1.8, 2.2},
	{"CNNDM", "T5-large", 1, 3, 0.56, 0.11, 1.6, 1.7},
}
