-- wrk script: POST the JSON body in $BENCH_BODY on every request, and print one JSON line at the end,
-- the same fields as load/autocannon.mjs (latencies in ms):
--   BENCH_BODY='{"type":"tool/call/req",…}' wrk -t1 -c50 -d5s -s bench/load/wrk-post.lua http://…/tool/call
wrk.method = "POST"
wrk.body = os.getenv("BENCH_BODY")
wrk.headers["content-type"] = "application/json"

-- wrk's own CPU seconds (user + system, every thread) from /proc: what it took from the machine.
local function cpu_seconds()
  local f = assert(io.open("/proc/self/stat"))
  local stat = f:read("*a")
  f:close()
  local fields = {}
  for v in stat:match("%) (.*)"):gmatch("%S+") do fields[#fields + 1] = v end
  return (tonumber(fields[12]) + tonumber(fields[13])) / 100 -- utime, stime (fields 14, 15); USER_HZ is 100
end

function done(summary, latency, requests)
  local e = summary.errors
  local seconds = summary.duration / 1e6
  io.write(string.format(
    '{"requests":%d,"rps":%.3f,"p50":%.3f,"p99":%.3f,"errors":%d,"non2xx":%d,"seconds":%.3f,"cpuS":%.2f}\n',
    summary.requests, summary.requests / seconds, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    e.connect + e.read + e.write + e.timeout, e.status, seconds, cpu_seconds()))
end
