package helper

import "github.com/kstep-dev/kstep/cluster/scheduler/framework"

// DefaultNormalizeScore scales scores so the largest becomes maxPriority;
// reverse then flips them (maxPriority - score), for raw scores where less
// is better. All-zero scores become 0, or maxPriority when reversed.
func DefaultNormalizeScore(maxPriority int64, reverse bool, scores []framework.NodeScore) {
	var maxCount int64
	for i := range scores {
		maxCount = max(maxCount, scores[i].Score)
	}
	if maxCount == 0 {
		if reverse {
			for i := range scores {
				scores[i].Score = maxPriority
			}
		}
		return
	}
	for i := range scores {
		s := maxPriority * scores[i].Score / maxCount
		if reverse {
			s = maxPriority - s
		}
		scores[i].Score = s
	}
}
