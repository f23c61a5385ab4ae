// Package network is Klassik's socket layer: the request server (Kafka's
// SocketServer) and the blocking inter-broker client.
//
// Kafka classes → files:
//
//	kafka.network.SocketServer (Acceptor, Processor)  server.go, conn.go (serve: one serveOne per
//	                                                  request: readRequestFrame, dispatch,
//	                                                  checkResponse, write)
//	kafka.network.ConnectionQuotas                    connectionquotas.go (per-IP, per-listener and
//	                                                  broker-wide limits and creation rates)
//	kafka.network.RequestChannel.Request              request.go (Request)
//	(none: Kafka mutes the channel instead)           pipeline.go (DeferredResponse, Waiter, the
//	                                                  per-connection response queue and writer)
//	kafka.server.KafkaApis (as seen from here)        request.go (Handler)
//	RequestHeader / ResponseHeader                    request.go (decodeRequest, appendResponseHeader)
//	ApiVersionsResponse / ApiVersionManager           apiversions.go
//	FetchResponse over FileRecords (zero copy)        splice.go (FileFetchResponse, splicer, SplicedResponse)
//	NetworkClient + NetworkClientUtils.sendAndReceive client.go (Client)
//	SaslServerAuthenticator (connection state only)   request.go (Session), conn.go (rawSASL)
//	SslTransportLayer handshake, SSL principal        tlsconn.go (tlsHandshake, DialFunc)
//	SaslClientAuthenticator (inter-broker login)      clientsasl.go (Client.AuthenticateSASL,
//	                                                  InterBrokerDialer)
//
// Framing: a request is an int32 size and that many bytes. A size ≤ 0 or above socket.request.max.bytes closes the connection
// without reading the body. Header v0 is used only by ControlledShutdown
// v0; other requests use v2 when their version is flexible (kmsg's
// IsFlexible), else v1. Unknown keys, keys the Handler does not serve,
// versions outside the Handler's range and bodies that do not parse close
// the connection; nothing is answered. Responses use header v1 when
// flexible, except ApiVersions, which always uses v0.
//
// ApiVersions is answered by this package, not by the Handler: it is the
// connection handshake, needs only Handler.Versions, and must also answer a
// version above our maximum with the KIP-511 v0 fallback (UNSUPPORTED_VERSION
// and our ApiVersions range) without parsing the body. The api layer may
// reuse ApiVersionsResponse / ApiKeys; Handle is never called for key 18.
//
// Zero-copy Fetch: a handler that has records in files (storage file
// ranges) returns a FileFetchResponse: the kmsg response with those
// records fields empty and each file attached by position
// (SetFileRecords). This package does the framing when it writes it:
// splicer puts a placeholder in each attached field, encodes with kmsg and
// cuts the encoding into byte pieces and file pieces (SplicedResponse);
// the server writes the byte pieces and hands the connection itself to
// FileRecords.WriteTo for each file piece, so a *net.TCPConn gets
// sendfile. Nothing above this package builds wire bytes.
//
// Encoded responses (encoded.go): a body encoded once (Encode) can be sent
// by many requests, each through its own EncodedResponse carrying that
// request's throttle_time_ms; the server writes the shared body with a
// vectored write and never modifies it, and its error codes were counted
// at encoding.
//
// SASL: each connection has a Session. On SASL_PLAINTEXT/SASL_SSL listeners it starts unauthenticated: only
// ApiVersions, SaslHandshake and SaslAuthenticate reach the Handler, other
// keys close the connection, and frames are capped at SaslMaxReceiveBytes.
// The Handler's SASL code marks the Session authenticated and may switch the
// connection to raw tokens after SaslHandshake v0 (Session.RawSASL); it sets
// Session.CloseAfterResponse to answer a failed handshake or authentication
// and then close, as Kafka does. A Session with ExpiresAt (KIP-368,
// connections.max.reauth.ms) is closed at its first request after that
// time unless the request is a SaslHandshake, which starts a
// re-authentication. The exchange itself lives in the api layer, the
// mechanisms in broker/security.
//
// Inter-broker clients dial through a DialFunc: InterBrokerDialer adds TLS
// (SSL, SASL_SSL) and then the broker's SASL login (SaslHandshake v1 and
// SaslAuthenticate v1 with franz-go's PLAIN/SCRAM client) for the
// inter-broker listener's protocol; every inter-broker connection (replica
// fetchers, controller channels, transaction markers, controlled shutdown)
// uses it.
//
// TLS: SSL and SASL_SSL listeners need ListenerConfig.TLS (and other
// listeners must not have one), built by broker/security from the ssl.*
// keys. The handshake runs on the connection's goroutine before the first
// request (tlsconn.go), bounded by 30 s or connections.max.idle.ms; a
// failed one closes the connection. On SSL listeners the Session's
// principal is "User:" + the client certificate's subject in Java's
// RFC 2253 form mapped by ListenerConfig.PrincipalMapper
// (ssl.principal.mapping.rules), User:ANONYMOUS without a certificate; a
// subject no rule maps closes the connection. DialTLS is the client side;
// DialFunc is the one signature every inter-broker dial goes through
// (InterBrokerDialer: TLS for SSL and SASL_SSL inter-broker listeners).
// File records over TLS are copied, not spliced.
//
// Metrics (when Config.Metrics is set), Kafka's names:
// RequestsPerSec and TotalTimeMs per request name
// (kafka.network.RequestMetrics.*.request=<Name>), an overall
// RequestsPerSec meter, and connection-count.
//
// Goroutines:
//
//   - one acceptor per listener (acceptLoop); stops when Shutdown closes the
//     listener, never on an accept error: out of descriptors (EMFILE,
//     ENFILE) it frees a reserve descriptor, accepts the waiting connection
//     and closes it at once (rejectWithReserve), other errors back off and
//     retry.
//   - one per connection (conn.serve, a loop over conn.serveOne): reads a
//     frame, decodes, calls the Handler, writes the response, then reads
//     the next frame. Stops on
//     EOF, any framing/decoding/handler error, idle timeout
//     (connections.max.idle.ms) or Shutdown, which closes the socket and
//     cancels the handler's context. Shutdown waits for all of them.
//   - one writer per connection that deferred a response (conn.writeLoop,
//     pipeline.go), started with its first deferred response: it ends each
//     queued wait and writes the queued responses in order. The
//     connection's goroutine owns it: when it stops it cancels the
//     handlers' context (every queued wait ends), closes the queue and
//     waits for the writer. A write error in the writer closes the
//     connection.
//
// The Client starts no goroutines.
//
// Invariants:
//
//   - At most one request per connection is being handled; responses leave
//     in request order (Kafka mutes the channel while a request is in
//     flight). A handler may therefore block (purgatory) without reordering.
//     The one overlap: an acks=all Produce that appended and parked may
//     return a DeferredResponse (Request.Defer); the connection then
//     handles further Produce requests (at most maxPendingResponses
//     responses queued) while the writer sends the responses in request
//     order, and any other request waits until the queue is written.
//   - A panic while decoding or in the Handler closes only that connection;
//     it is logged with its stack.
//   - Each frame gets a fresh buffer: kmsg's decoded slices alias it.
//   - The Client has at most one request in flight and is unusable after
//     any I/O error (the owner redials).
package network
