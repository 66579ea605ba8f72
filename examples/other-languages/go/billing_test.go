// A partner's Go test against the billing sandbox's image with testcontainers-go: the wait, a fresh
// partner's credentials, a token, one call, a webhook to a receiver on this machine, and the events
// asserted through GET /_sandbox/events instead.
package billing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// startSandbox runs the image for one test and returns its base URL once GET /_sandbox/health answers 200.
func startSandbox(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	image := os.Getenv("BILLING_SANDBOX_IMAGE")
	if image == "" {
		image = "billing-sandbox:latest"
	}
	// #region wait
	sandbox, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image:        image,
			ExposedPorts: []string{"4010/tcp"},
			Cmd:          []string{"--rate-limit", "0", "--allow-http-webhooks"},
			HostConfigModifier: func(hc *container.HostConfig) {
				hc.ExtraHosts = append(hc.ExtraHosts, "host.docker.internal:host-gateway") // the receiver below
			},
			WaitingFor: wait.ForHTTP("/_sandbox/health").WithPort("4010/tcp").WithStartupTimeout(60 * time.Second),
		},
		Started: true,
	})
	// #endregion wait
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sandbox.Terminate(context.Background()) })
	host, err := sandbox.Host(ctx)
	if err != nil {
		t.Fatal(err)
	}
	port, err := sandbox.MappedPort(ctx, "4010/tcp")
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("http://%s:%s", host, port.Port())
}

// partner makes a fresh partner (POST /_sandbox/partners) and returns an access token for its production key.
func partner(t *testing.T, baseURL string) string {
	var made struct {
		Credentials struct {
			Production struct {
				ClientID     string `json:"client_id"`
				ClientSecret string `json:"client_secret"`
			} `json:"production"`
		} `json:"credentials"`
	}
	// #region token
	call(t, baseURL, "POST", "/_sandbox/partners", "", map[string]string{"name": "go test"}, &made)
	req, _ := http.NewRequest("POST", baseURL+"/oauth/token", strings.NewReader(url.Values{"grant_type": {"client_credentials"}}.Encode()))
	req.SetBasicAuth(made.Credentials.Production.ClientID, made.Credentials.Production.ClientSecret)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	var granted struct {
		AccessToken string `json:"access_token"`
	}
	do(t, req, &granted)
	return granted.AccessToken
	// #endregion token
}

// call sends JSON with the access token (which also names the account on the control plane) and decodes the answer.
func call(t *testing.T, baseURL, method, path, token string, body, answer any) {
	t.Helper()
	var payload bytes.Buffer
	if body != nil {
		_ = json.NewEncoder(&payload).Encode(body)
	}
	req, _ := http.NewRequest(method, baseURL+path, &payload)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	do(t, req, answer)
}

func do(t *testing.T, req *http.Request, answer any) {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode >= 300 {
		var httpError struct{ Code, Message string }
		_ = json.NewDecoder(res.Body).Decode(&httpError)
		t.Fatalf("%s %s answered %d %s: %s", req.Method, req.URL.Path, res.StatusCode, httpError.Code, httpError.Message)
	}
	if answer != nil {
		if err := json.NewDecoder(res.Body).Decode(answer); err != nil {
			t.Fatal(err)
		}
	}
}

type customer struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

func TestBillingSandbox(t *testing.T) {
	baseURL := startSandbox(t)

	t.Run("a token and one call", func(t *testing.T) {
		token := partner(t, baseURL)
		var made, got customer
		call(t, baseURL, "POST", "/customers", token, map[string]string{"name": "Acme Corp", "email": "ap@acme.test"}, &made)
		call(t, baseURL, "GET", "/customers/"+made.ID, token, nil, &got)
		if got != made {
			t.Fatalf("read back %+v, made %+v", got, made)
		}
	})

	t.Run("a webhook to a receiver on this machine", func(t *testing.T) {
		token := partner(t, baseURL)
		// #region receiver
		listener, err := net.Listen("tcp", "0.0.0.0:0") // reachable from the container
		if err != nil {
			t.Fatal(err)
		}
		deliveries := make(chan map[string]any, 8)
		receiver := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var delivery map[string]any
			_ = json.NewDecoder(r.Body).Decode(&delivery)
			deliveries <- delivery
		})}
		go func() { _ = receiver.Serve(listener) }()
		defer receiver.Close()
		endpoint := fmt.Sprintf("http://host.docker.internal:%d/hooks", listener.Addr().(*net.TCPAddr).Port)
		call(t, baseURL, "POST", "/webhooks", token, map[string]string{"endpoint_url": endpoint, "topic": "customer_created"}, nil)
		var made customer
		call(t, baseURL, "POST", "/customers", token, map[string]string{"name": "Globex"}, &made)
		select {
		case delivery := <-deliveries:
			if delivery["topic"] != "customer_created" || delivery["entity_id"] != made.ID {
				t.Fatalf("unexpected delivery %v", delivery)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no delivery within 10 s")
		}
		// #endregion receiver
	})

	t.Run("the events instead of a receiver", func(t *testing.T) {
		token := partner(t, baseURL)
		var made customer
		call(t, baseURL, "POST", "/customers", token, map[string]string{"name": "Initech"}, &made)
		var events struct {
			Data []struct {
				Topic    string `json:"topic"`
				EntityID string `json:"entity_id"`
			} `json:"data"`
		}
		// #region events
		call(t, baseURL, "GET", "/_sandbox/events?topic=customer_created&entity_id="+made.ID, token, nil, &events)
		if len(events.Data) != 1 || events.Data[0].EntityID != made.ID {
			t.Fatalf("events %+v", events.Data)
		}
		// #endregion events
	})
}
