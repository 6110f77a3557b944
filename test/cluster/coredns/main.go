// Command coredns is the test stack's CoreDNS: upstream's server and plugins, built with
// only the plugins the tenant DNS Corefile uses (libs/sync corefile()) plus `bind`, which
// the harness adds. Upstream's own main links every plugin it ships (cloud DNS providers,
// etcd, Kubernetes, ...): four minutes of a cold build for code no test runs.
package main

import (
	"github.com/coredns/coredns/coremain"
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/file"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/template"
)

func main() {
	coremain.Run()
}
