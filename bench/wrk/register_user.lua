-- wrk script for `bench/serve-load.py`: POST /register_user with a fresh e-mail address per request,
-- either unsigned (to /unsigned/register_user) or signed per RFC 9421 with hmac-sha256 or ed25519; or
-- (ROUTE data-keys) a signed POST /data-keys with the body {}, a device fetching its data key.
--
-- Unsigned requests are built in init(), before wrk starts its clock; signed ones are built and signed
-- as each is sent (with the second it leaves as `created`, as a real client signs), through OpenSSL's
-- libcrypto (LuaJIT FFI):
-- the load generator's signing does not count against the server (it runs in wrk, whose CPU time is
-- not the server's), and the signatures come from a second implementation (OpenSSL), not from Coffer.
--
--   wrk -t1 -c16 -d10s --latency -s register_user.lua http://127.0.0.1:PORT -- MODE KEYID KEYFILE COUNT RUN [ROUTE [PACE [SIGNING]]]
--
-- MODE: unsigned | hmac-sha256 | ed25519 | twin-hmac-sha256 | twin-ed25519 (a request built and signed
-- as the signed mode's, sent to the unsigned twin, which checks a fixed signature of that kind once:
-- the primitive's work and the load generator's, without Coffer's signature handling). KEYID: the registered key (for unsigned too: the twin route
-- records the user against it). KEYFILE: the HMAC secret or the Ed25519 seed, 32 raw bytes
-- (unused for unsigned). COUNT: requests built per thread (each is sent once; more would be replays).
-- RUN: a string that makes this run's e-mail addresses and nonces unique. ROUTE: register_user (the
-- default) or data-keys. PACE: milliseconds each connection waits before its next request (wrk's
-- delay(); 0, the default, sends as fast as answers come): C connections at PACE ms offer at most
-- C * 1000 / PACE requests a second, a load below saturation whose latency is the route's, not a queue's.
-- SIGNING: sign-as-sent (the default) or presign: every request built and signed in init(), with the
-- second init() ran as `created`, so that wrk only sends while it is timed (its signing, 22 µs per
-- Ed25519 request, otherwise shares the cores with the server).

local ffi = require("ffi")
ffi.cdef [[
typedef struct evp_md_st EVP_MD;
typedef struct evp_md_ctx_st EVP_MD_CTX;
typedef struct evp_pkey_st EVP_PKEY;
typedef struct evp_pkey_ctx_st EVP_PKEY_CTX;
const EVP_MD *EVP_sha256(void);
unsigned char *SHA256(const unsigned char *d, size_t n, unsigned char *md);
unsigned char *HMAC(const EVP_MD *md, const void *key, int key_len, const unsigned char *d, size_t n,
                    unsigned char *out, unsigned int *out_len);
EVP_PKEY *EVP_PKEY_new_raw_private_key(int type, void *engine, const unsigned char *key, size_t len);
EVP_MD_CTX *EVP_MD_CTX_new(void);
void EVP_MD_CTX_free(EVP_MD_CTX *ctx);
int EVP_DigestSignInit(EVP_MD_CTX *ctx, EVP_PKEY_CTX **pctx, const EVP_MD *md, void *engine, EVP_PKEY *key);
int EVP_DigestSign(EVP_MD_CTX *ctx, unsigned char *sig, size_t *siglen, const unsigned char *tbs, size_t tbslen);
int EVP_EncodeBlock(unsigned char *out, const unsigned char *in, int n);
]]
local crypto = ffi.load("crypto")
local NID_ED25519 = 1087

local function base64(bytes, length)
  local out = ffi.new("unsigned char[?]", 4 * math.ceil(length / 3) + 1)
  local written = crypto.EVP_EncodeBlock(out, bytes, length)
  return ffi.string(out, written)
end

local function sha256(text)
  local digest = ffi.new("unsigned char[32]")
  crypto.SHA256(text, #text, digest)
  return base64(digest, 32)
end

local function read_file(path)
  local file = assert(io.open(path, "rb"))
  local content = file:read("*a")
  file:close()
  return content
end

local function signer(mode, key)
  if mode == "hmac-sha256" then
    local out = ffi.new("unsigned char[32]")
    local length = ffi.new("unsigned int[1]")
    return function(base)
      assert(crypto.HMAC(crypto.EVP_sha256(), key, #key, base, #base, out, length) ~= nil, "HMAC failed")
      return base64(out, length[0])
    end
  elseif mode == "ed25519" then
    local pkey = crypto.EVP_PKEY_new_raw_private_key(NID_ED25519, nil, key, #key)
    assert(pkey ~= nil, "not an Ed25519 seed")
    local out = ffi.new("unsigned char[64]")
    local length = ffi.new("size_t[1]")
    return function(base)
      local context = crypto.EVP_MD_CTX_new()
      assert(crypto.EVP_DigestSignInit(context, nil, nil, nil, pkey) == 1, "EVP_DigestSignInit failed")
      length[0] = 64
      assert(crypto.EVP_DigestSign(context, out, length, base, #base) == 1, "EVP_DigestSign failed")
      crypto.EVP_MD_CTX_free(context)
      return base64(out, tonumber(length[0]))
    end
  end
  error("unknown mode " .. tostring(mode))
end

local threads_made = 0

-- Runs in wrk's main Lua state; thread:set makes `thread_id` a global of the thread's own state.
function setup(thread)
  threads_made = threads_made + 1
  thread:set("thread_id", threads_made)
end

local requests = {}
local next_request = 1
local pace = 0
local sign = nil
local signed = nil   -- for signed modes: what every request shares (see init)
local last = nil     -- the last signed request sent, repeated past COUNT

-- Signed requests are built and signed as they are sent, as a client does: `created` is the second each
-- one leaves, so the server sees the anchors (and the replay records' order) of real traffic at this
-- rate. Signing everything in init() once gave a whole run one `created` second, which spread each
-- run's replay records at random over one region of the replay index, as no real load does.
--
-- Nothing is kept per signed request: an earlier version built each one's body, digest and nonce in
-- init() (a Lua table of six strings per request, 320,000 of them at --per-second 40000) and made the
-- rest as it sent them, and wrk stopped for about 260 ms a few times a run (with the collector stopped
-- too: likely LuaJIT rehashing its table of two million interned strings as it grew and shrank). wrk
-- corrects its percentiles for such pauses (coordinated omission), so a pause of the load generator
-- read as a p99 of 130-170 ms for the HMAC route on 2026-11-27, whose server never paused (requests
-- signed ahead of time: p99 3.9 ms, max 15-35 ms; the twin's requests are prebuilt strings that make no
-- garbage, p99 3.1 ms).
-- A signed request: the `index`th of this run, signed with `created`.
local function signed_request(index, created)
  local unique = signed.prefix .. index
  local body = signed.data_keys and "{}" or '{"email": "user-' .. unique .. '@example.com", "name": "Ada Lovelace"}'
  local digest = "sha-256=:" .. sha256(body) .. ":"
  local tail = ';nonce="' .. unique .. signed.alg_keyid
  local fields = {
    ["Content-Type"] = "application/json",
    ["Content-Digest"] = digest,
    ["Signature-Input"] = "sig1=" .. signed.covered .. ";created=" .. created .. tail,
    ["Signature"] = "sig1=:" .. sign(signed.base_head .. digest .. signed.base_middle .. created .. tail) .. ":",
  }
  if signed.primitive then
    fields["Coffer-Unsigned-Key-Id"] = signed.keyid
    fields["Coffer-Unsigned-Primitive"] = signed.primitive
  end
  return wrk.format("POST", signed.path, fields, body)
end

function init(args)
  local mode, keyid, keyfile, count, run = args[1], args[2], args[3], tonumber(args[4]), args[5]
  local route = args[6] or "register_user"
  pace = tonumber(args[7] or "0")
  local authority = wrk.host .. ":" .. wrk.port
  local target_uri = wrk.scheme .. "://" .. authority .. "/" .. route
  -- twin-MODE: signed exactly as MODE (the load generator's work the same), sent to the unsigned twin,
  -- which runs MODE's primitive once over a fixed base instead of verifying the signature.
  local primitive = mode:match("^twin%-(.+)$")
  if primitive then mode = primitive end
  sign = mode ~= "unsigned" and signer(mode, read_file(keyfile)) or nil
  local path = (mode == "unsigned" or primitive) and "/unsigned/" .. route or "/" .. route
  local prefix = run .. "-" .. (thread_id or 1) .. "-"
  if sign then
    local covered = '("@method" "@target-uri" "content-digest" "content-type")'
    signed = {
      count = count, path = path, prefix = prefix, data_keys = route == "data-keys",
      primitive = primitive, keyid = keyid,
      covered = covered, alg_keyid = '";alg="' .. mode .. '";keyid="' .. keyid .. '"',
      base_head = '"@method": POST\n' .. '"@target-uri": ' .. target_uri .. "\n" .. '"content-digest": ',
      base_middle = "\n" .. '"content-type": application/json\n' .. '"@signature-params": ' .. covered .. ";created=",
    }
    if args[8] ~= "presign" then return end
    local created = os.time()
    for index = 1, count do requests[index] = signed_request(index, created) end
    sign = nil   -- request() sends what was built
    return
  end
  for index = 1, count do
    local body = route == "data-keys" and "{}" or '{"email": "user-' .. prefix .. index .. '@example.com", "name": "Ada Lovelace"}'
    -- The twin's key rides in a field of its own: whom the twin route records the user against.
    requests[index] = wrk.format("POST", path, { ["Content-Type"] = "application/json", ["Coffer-Unsigned-Key-Id"] = keyid }, body)
  end
end

function delay()
  return pace
end

function request()
  -- Past the last one the requests repeat: the server answers them 401 (replayed) or 409 (e-mail
  -- taken), which wrk counts as non-2xx responses and serve-load.py reports as a failed run.
  local index = next_request
  next_request = next_request + 1
  if not sign then return requests[index] or requests[#requests] end
  if index > signed.count then return last end
  last = signed_request(index, os.time())
  return last
end
