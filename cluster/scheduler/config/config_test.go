package config

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	c, err := Parse([]byte(`
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
parallelism: 8
percentageOfNodesToScore: 30
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      disabled:
      - name: ImageLocality
      enabled:
      - name: NodeResourcesBalancedAllocation
        weight: 5
- schedulerName: batch
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Parallelism != 8 || *c.PercentageOfNodesToScore != 30 || len(c.Profiles) != 2 {
		t.Fatalf("parsed %+v", c)
	}
	if c.PodInitialBackoffSeconds != 1 || c.PodMaxBackoffSeconds != 10 {
		t.Fatalf("backoff defaults %d/%d", c.PodInitialBackoffSeconds, c.PodMaxBackoffSeconds)
	}
	p := c.Profiles[0].Plugins
	if p.Score.Disabled[0].Name != "ImageLocality" || p.Score.Enabled[0].Weight != 5 {
		t.Fatalf("plugins %+v", p)
	}
}

func TestDefault(t *testing.T) {
	c := Default()
	if len(c.Profiles) != 1 || c.Profiles[0].SchedulerName != "default-scheduler" || c.Parallelism != 16 {
		t.Fatalf("default %+v", c)
	}
}

func TestParseRejects(t *testing.T) {
	tests := map[string]string{
		"unknown field":     "parallelism: 4\nleaderElection: {}\n",
		"wrong apiVersion":  "apiVersion: v2\n",
		"duplicate profile": "profiles: [{schedulerName: a}, {schedulerName: a}]\n",
		"percentage":        "percentageOfNodesToScore: 101\n",
		"weight":            "profiles: [{plugins: {score: {enabled: [{name: X, weight: 200}]}}}]\n",
		"nameless plugin":   "profiles: [{plugins: {filter: {disabled: [{weight: 1}]}}}]\n",
		"backoff":           "podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 2\n",
	}
	for name, doc := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := Parse([]byte(doc)); err == nil {
				t.Fatalf("accepted %q", doc)
			} else if strings.TrimSpace(err.Error()) == "" {
				t.Fatal("empty error")
			}
		})
	}
}
