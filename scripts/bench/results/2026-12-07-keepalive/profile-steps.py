import sys, re, collections
# Attribute user-space samples (leaf not in kernel) to phases by the innermost matching frame.
phases = [
 ("parse", re.compile(r"HTTPResponseParser|HTTPHeaders|HTTPResponseHead")),
 ("serializeHead", re.compile(r"serializeHead|RequestHeadWriter|SuppliedFields")),
 ("SSL_write (OpenSSL user)", re.compile(r"SSL_write_ex")),
 ("SSL_read (OpenSSL user)", re.compile(r"SSL_read_ex")),
 ("other OpenSSL (has_pending, ERR)", re.compile(r"SSL_has_pending|ERR_clear_error|ERR_|SSL_get_error|OpenSSLErrorQueue")),
 ("TLSConnection.step", re.compile(r"TLSConnection\.step")),
 ("socket wait / EventLoop.wait", re.compile(r"EventLoop\.wait|SocketHandle\.wait|awaitSocket")),
 ("loop settle", re.compile(r"EventLoop\.settle")),
 ("poll (user side)", re.compile(r"__poll|__GI___poll")),
 ("checkout/checkin", re.compile(r"checkout|checkin|IdleConnections")),
 ("TLSConnection.read/write", re.compile(r"TLSConnection\.(read|write)")),
 ("attempt (exchange body)", re.compile(r"HTTPExchange\.attempt")),
 ("exchange perform", re.compile(r"HTTPExchange\.perform|HTTPSClient\.perform")),
 ("task run machinery", re.compile(r"swift_job_run|runJobInEstablished")),
 ("EventLoop.drive", re.compile(r"EventLoop\.drive")),
 ("Engine.blocking", re.compile(r"Engine\.blocking|BlockingJob")),
 ("HTTPSClient.send", re.compile(r"HTTPSClient\.send")),
 ("bench main", re.compile(r"https\(_:\)|mtls_bench_main")),
]
counts = collections.Counter(); leafs = collections.defaultdict(collections.Counter)
total = 0; user = 0
stack = []
def flush():
    global total, user
    if not stack: return
    total += 1
    leaf = stack[0]
    if "kernel.kallsyms" in leaf: return
    user += 1
    for name, rx in phases:
        pass
    # innermost frame that matches any phase
    for fr in stack:
        for name, rx in phases:
            if rx.search(fr):
                counts[name] += 1
                leafs[name][re.sub(r"^\s*[0-9a-f]+ ", "", leaf)[:90]] += 1
                return
    counts["(other)"] += 1
    leafs["(other)"][re.sub(r"^\s*[0-9a-f]+ ", "", leaf)[:90]] += 1
for line in open(sys.argv[1]):
    if not line.strip():
        flush(); stack = []
    else:
        stack.append(line.strip())
flush()
n = int(sys.argv[2]) if len(sys.argv) > 2 else 1
print(f"samples {total}, user {user}")
for name, c in counts.most_common():
    print(f"{c:6d} {100*c/user:5.1f}%  {name}")
    if len(sys.argv) > 3:
        for l, k in leafs[name].most_common(6): print(f"           {k:5d} {l}")
