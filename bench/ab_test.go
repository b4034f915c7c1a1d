package bench

import (
	"slices"
	"testing"
)

// ABOrder takes the runs in pairs A B, B A, A B, ...: each side runs n
// times, and a drift linear in the run's position costs both sides alike
// whenever n is even (the sum of a side's positions is the other's).
func TestABOrder(t *testing.T) {
	if got, want := ABOrder(3), []int{0, 1, 1, 0, 0, 1}; !slices.Equal(got, want) {
		t.Fatalf("ABOrder(3) = %v, want %v", got, want)
	}
	for n := 1; n <= 12; n++ {
		o := ABOrder(n)
		var count, pos [2]int
		for i, s := range o {
			count[s]++
			pos[s] += i
		}
		if len(o) != 2*n || count[0] != n || count[1] != n {
			t.Fatalf("ABOrder(%d) = %v: want %d runs a side", n, o, n)
		}
		if n%2 == 0 && pos[0] != pos[1] {
			t.Errorf("ABOrder(%d): positions sum to %d for A and %d for B, want equal", n, pos[0], pos[1])
		}
	}
}
