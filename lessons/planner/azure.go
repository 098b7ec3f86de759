package planner

// azureConvPerSecond is the azure-conv preset's arrivals in each second of
// its window (core/workload's presets/azure-conv.txt: Azure LLM inference
// trace 2023, conversation, CC-BY 4.0; Patel et al., "Splitwise", ISCA
// 2024), 1,445 requests in 300 s. The lesson bins it into its intervals for
// the load curve's shape; a table here, not the preset, so that the page,
// which checks knobs but never simulates, links no trace
// (TestPlannerAzureCurveIsThePresets checks it against the file).
var azureConvPerSecond = [300]uint8{
	1, 0, 0, 0, 3, 1, 1, 1, 4, 2, 2, 3, 1, 2, 3, 0, 0, 2, 3, 2, 3, 2, 2, 1, 3, 5, 3, 2, 5, 2,
	1, 4, 1, 8, 1, 1, 3, 2, 4, 5, 3, 2, 10, 6, 3, 9, 6, 4, 6, 9, 9, 6, 5, 5, 2, 3, 2, 9, 2, 1,
	7, 9, 4, 3, 7, 7, 7, 5, 1, 1, 5, 2, 4, 6, 2, 5, 4, 2, 5, 9, 4, 2, 5, 2, 7, 4, 4, 8, 5, 5,
	2, 6, 3, 1, 8, 2, 4, 6, 3, 4, 3, 5, 8, 3, 3, 5, 4, 4, 2, 2, 6, 3, 5, 5, 6, 4, 3, 5, 3, 6,
	5, 3, 1, 8, 8, 5, 4, 5, 4, 9, 6, 4, 3, 3, 6, 9, 2, 2, 5, 3, 6, 8, 4, 8, 3, 6, 6, 7, 6, 8,
	8, 6, 3, 2, 4, 6, 3, 11, 5, 10, 5, 10, 3, 5, 7, 6, 6, 8, 3, 6, 5, 5, 4, 2, 4, 8, 9, 2, 8, 8,
	7, 10, 6, 4, 8, 9, 5, 8, 11, 2, 4, 6, 2, 6, 4, 8, 3, 4, 6, 3, 7, 2, 7, 9, 4, 8, 3, 4, 5, 5,
	10, 12, 5, 9, 6, 2, 5, 4, 7, 4, 5, 3, 6, 2, 3, 8, 8, 4, 10, 8, 8, 9, 12, 8, 1, 4, 3, 7, 5, 5,
	2, 4, 5, 3, 5, 4, 3, 4, 6, 8, 6, 1, 6, 9, 7, 7, 7, 7, 6, 1, 5, 4, 9, 4, 5, 6, 7, 3, 2, 6,
	4, 3, 3, 3, 6, 10, 4, 5, 3, 7, 9, 8, 5, 6, 6, 5, 7, 5, 3, 1, 7, 4, 3, 7, 7, 3, 7, 5, 4, 5,
}
