# Varnish in front of `npm start` (README, "Caching"): it keeps what the
# server marks for a shared cache (answers to a good key: CDN-Cache-Control,
# RFC 9213) and nothing else, and purges by tag when the server or
# `npm run keys` calls CACHE_PURGE_URL (PURGE with an xkey-purge header).
#   varnishd -F -a :6081 -f "$PWD/deploy/varnish/default.vcl" -s malloc,256m -s Transient=malloc,32m
# (-s malloc: the answers kept; Transient: replies on their way through and
# the 1 s hit-for-miss marks below, bounded so a flood cannot grow it.)
#   CACHE_PURGE_URL=http://127.0.0.1:6081/ TRUSTED_PROXIES=127.0.0.1 npm start
# Varnish appends the client's address to X-Forwarded-For before vcl_recv;
# TRUSTED_PROXIES lets the server's portal limits count that client, not Varnish.
vcl 4.1;

import std;
import xkey;  # Debian's varnish-modules

# npm start; tests rewrite this port.
backend default {
    .host = "127.0.0.1";
    .port = "8888";
}

# Who may purge: the server and the keys CLI, on this machine.
acl purgers {
    "127.0.0.1";
    "::1";
}

sub vcl_recv {
    if (req.method == "PURGE") {
        if (client.ip !~ purgers) {
            return (synth(403, "Forbidden"));
        }
        if (!req.http.xkey-purge) {
            return (synth(400, "Name the tags to purge in xkey-purge"));
        }
        # Space-separated tags: key-<id>, rev-<digest>, answers.
        set req.http.x-purged = xkey.purge(req.http.xkey-purge);
        return (synth(200, "Purged " + req.http.x-purged));
    }
    # Byte ranges exist only for the dataset's files, as on the server: elsewhere Varnish would cut its
    # own copy (gzip bytes for a client that takes gzip), where the server answers the whole of it.
    if (req.url ~ "^/dataset/file=[^/?#]*/apikey=[^/?#]*/?([?#]|$)") {
        call dataset_range;
    } else {
        unset req.http.Range;
        unset req.http.If-Range;
    }
    # The portal, /health and anything but a read always go to the server.
    if (req.url ~ "^/(portal|health)([/?#]|$)" || (req.method != "GET" && req.method != "HEAD")) {
        return (pass);
    }
    # Only an answer to a key is ever kept: a URL without a key-shaped segment goes straight through,
    # leaving nothing behind (a flood of distinct keyless URLs costs Varnish no memory).
    if (req.url !~ "/apikey=faa_[A-Za-z0-9_-]{32}([/?#]|$)") {
        return (pass);
    }
    # Answers depend on the URL alone (the key is in it); a browser's cookies must not split or bypass the cache.
    unset req.http.Cookie;
    unset req.http.Authorization;
    return (hash);
}

# A dataset file is kept as the file itself (see vcl_backend_fetch), and Varnish answers a Range from
# it, checking If-Range against its ETag. Varnish reads a Range as the server does (src/http/reply.ts)
# except for what it would refuse with a 416 where the server ignores the header and sends the whole
# file: anything but one range of bytes (`bytes=-`, several ranges, `items=`), and first-last with
# last < first (RFC 9110, 14.1.1); those become a request for the whole file here too.
sub dataset_range {
    std.collect(req.http.Range);
    if (req.http.Range !~ "^bytes=([0-9]{0,16}-[0-9]{1,16}|[0-9]{1,16}-)$") {
        unset req.http.Range;
    } elsif (req.http.Range ~ "^bytes=[0-9]+-[0-9]+$" && std.integer(s = regsub(req.http.Range, "^bytes=0*([0-9]{1,15})-.*$", "\1"), fallback = 999999999999999) > std.integer(s = regsub(req.http.Range, "^.*-0*([0-9]{1,15})$", "\1"), fallback = 999999999999999)) {
        # (A number past 15 digits, the most VCL's integers hold, counts as the largest: only a first and a
        # last both past that, a petabyte beyond any file, keep Varnish's 416 where the server sends it all.)
        unset req.http.Range;
    }
}

sub vcl_hash {
    # A dataset file is kept as stored (vcl_backend_fetch): never answered from a gzip copy that an
    # earlier VCL kept under the same URL and that is still in the cache when this one is loaded.
    if (req.url ~ "^/dataset/file=[^/?#]*/apikey=[^/?#]*/?([?#]|$)") {
        hash_data("identity");
    }
}

sub vcl_backend_fetch {
    # Varnish asks for gzip (http_gzip_support) and, for a client that does not take it, gunzips on
    # the way out and weakens the ETag: a weak ETag never matches If-Range, and a Range would apply to
    # gzip bytes for a client that takes them. A dataset file is fetched as stored instead, so every
    # client gets the file the /dataset list describes (its bytes and sha256) with its strong ETag,
    # and ranges of it. The price: these files go uncompressed through Varnish (oscars.ndjson is about
    # seven times its gzip copy). JSON answers stay gzip.
    if (bereq.url ~ "^/dataset/file=[^/?#]*/apikey=[^/?#]*/?([?#]|$)") {
        unset bereq.http.Accept-Encoding;
    }
}

sub vcl_backend_response {
    # Kept only when the server said a shared cache may (with max-age) and tagged it; xkey indexes the xkey header.
    if (beresp.http.CDN-Cache-Control ~ "max-age=[0-9]+" && beresp.http.xkey) {
        set beresp.ttl = std.duration(regsub(beresp.http.CDN-Cache-Control, "^.*max-age=([0-9]+).*$", "\1s"), 0s);
        set beresp.grace = 0s;
        return (deliver);
    }
    # Everything else for a key (403, 429, 400, 500): never stored. For 1 s requests for that URL
    # go straight to the server (hit-for-miss) rather than queue behind one another; no longer,
    # so distinct URLs leave at most a second's worth of small marks in Transient.
    set beresp.ttl = 1s;
    set beresp.grace = 0s;
    set beresp.keep = 0s;
    set beresp.uncacheable = true;
    return (deliver);
}

sub vcl_deliver {
    # What was for this cache only does not reach the client (X-Varnish and Age stay: they show a hit).
    unset resp.http.xkey;
    unset resp.http.CDN-Cache-Control;
    # Varnish offers ranges on whatever it delivers from its store; only a dataset file takes them.
    if (req.url !~ "^/dataset/file=[^/?#]*/apikey=[^/?#]*/?([?#]|$)") {
        unset resp.http.Accept-Ranges;
    }
}
