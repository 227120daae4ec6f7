# Compile every corpus case with real Puppet 7, in ONE Ruby process.
#
# Debian's puppet libraries are loaded once; settings point at a throwaway
# confdir/vardir/codedir (no network, no PuppetDB, no server facts). Each
# case gets a fresh environment (the modulepath only, no environment data)
# and a node with the fact set's facts, compiled with
# Puppet::Parser::Compiler.compile and filtered as the catalog indirection
# filters (virtual resources removed). One JSON line per case is written:
#   {"id", "facts", "ms", "cpu_ms", "status": "ok", "catalog": <catalog JSON>}
#   {"id", "facts", "ms", "cpu_ms", "status": "err", "message", "file", "line", "column"}
# (ms: wall time of the compile; cpu_ms: the process's CPU time during it)
#
#   ruby puppet_compile.rb CASES.jsonl FACTS_DIR MODULEPATH OUT.jsonl [FACTSET...]
#
# run.py calls this; see README.md.

require 'json'
require 'tmpdir'
require 'timeout'
require 'puppet'

cases_file, facts_dir, modulepath, out_file, *only = ARGV
abort 'usage: puppet_compile.rb CASES.jsonl FACTS_DIR MODULEPATH OUT.jsonl [FACTSET...]' unless out_file

tmp = Dir.mktmpdir('ferry-corpus-puppet')
%w[conf var code env].each { |d| Dir.mkdir(File.join(tmp, d)) }
Puppet.initialize_settings([
  '--confdir', File.join(tmp, 'conf'), '--vardir', File.join(tmp, 'var'),
  '--codedir', File.join(tmp, 'code'), '--environmentpath', File.join(tmp, 'env'),
  '--modulepath', modulepath, '--color', 'false', '--log_level', 'err',
  '--strict', 'warning', '--no-storeconfigs'
])
Puppet::Util::Log.newdestination(:console) if ENV['CORPUS_PUPPET_LOG']
NODE = 'node1.example.com'.freeze

fact_sets = Dir[File.join(facts_dir, '*.json')].sort.map do |f|
  [File.basename(f, '.json'), JSON.parse(File.read(f))]
end
fact_sets.select! { |name, _| only.include?(name) } unless only.empty?
cases = File.readlines(cases_file).map { |l| JSON.parse(l) }
modules = modulepath.split(':')

def location(err)
  file = err.respond_to?(:file) ? err.file : nil
  line = err.respond_to?(:line) ? err.line : nil
  col = err.respond_to?(:pos) ? err.pos : nil
  [file, line, col]
end

File.open(out_file, 'w') do |out|
  out.sync = true
  fact_sets.each do |fname, facts|
    cases.each do |c|
      id = "#{c['name']}@#{fname}"
      start = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      cpu_start = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)
      row = { 'id' => id, 'facts' => fname }
      begin
        Puppet[:code] = c['code']
        env = Puppet::Node::Environment.create(:production, modules)
        Puppet.override(environments: Puppet::Environments::Static.new(env), current_environment: env) do
          node = Puppet::Node.new(NODE, environment: env)
          node.fact_merge(Puppet::Node::Facts.new(NODE, Marshal.load(Marshal.dump(facts))))
          node.trusted_data = Puppet::Context::TrustedInformation.local(node).to_h
          catalog = Timeout.timeout(120) { Puppet::Parser::Compiler.compile(node) }
          catalog = catalog.filter { |r| r.virtual? }
          row['status'] = 'ok'
          row['catalog'] = catalog.to_data_hash
        end
      rescue Exception => e # rubocop:disable Lint/RescueException
        raise if e.is_a?(SignalException) # Interrupt, TERM: stop, do not record
        row['status'] = 'err'
        row['message'] = e.message
        row['class'] = e.class.name
        cause = e
        cause = cause.cause while cause.cause && !cause.respond_to?(:line)
        row['file'], row['line'], row['column'] = location(cause)
      end
      row['ms'] = ((Process.clock_gettime(Process::CLOCK_MONOTONIC) - start) * 1000).round(1)
      row['cpu_ms'] = ((Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID) - cpu_start) * 1000).round(1)
      out.puts(JSON.generate(row))
    end
  end
end
FileUtils.rm_rf(tmp)
