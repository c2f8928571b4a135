-- bench:api: after a wrk run, the latency of every 0.1 % of its requests (µs), so that the runs
-- of one target (the slices of bench:api) can be merged into one true p99.
done = function(summary, latency, requests)
  local out = {}
  for i = 1, 1000 do
    out[i] = latency:percentile(i / 10)
  end
  io.write("QUANTILES " .. summary.requests .. " " .. table.concat(out, ",") .. "\n")
end
