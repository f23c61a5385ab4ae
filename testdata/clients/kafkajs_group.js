// A kafkajs consumer-group member for the Klassik group suite
// (broker/e2e/groups_kafkajs_test.go).
//
//   node kafkajs_group.js --bootstrap <b,b> --topic <t> --group <g> --name <client id>
//                         [--assignor roundrobin] [--session-ms 6000]
//
// Subscribes from the beginning, commits after every batch (autoCommit off)
// and prints the suite's line protocol on stdout:
//
//   ASSIGN <p>,<p>,...|-     the whole assignment after each rebalance
//   REC <p> <offset> <value> every record handed to the application
//   COMMIT <p> <offset>      an acknowledged commit (offset = next to read)
//
// Writes to a pipe are synchronous in Node on Linux, so REC lines are out
// before the commit that covers them. EOF on stdin asks for a clean stop:
// the member disconnects (LeaveGroup) and exits 0. kafkajs logs go to stderr.
'use strict'
const { Kafka, logLevel, PartitionAssigners } = require('kafkajs')

function args () {
  const a = { assignor: 'roundrobin', sessionMs: 6000 }
  const argv = process.argv.slice(2)
  for (let i = 0; i < argv.length; i += 2) {
    const k = argv[i]; const v = argv[i + 1]
    if (k === '--bootstrap') a.bootstrap = v
    else if (k === '--topic') a.topic = v
    else if (k === '--group') a.group = v
    else if (k === '--name') a.name = v
    else if (k === '--assignor') a.assignor = v || 'roundrobin'
    else if (k === '--session-ms') a.sessionMs = parseInt(v, 10)
    else if (k === '--instance-id') { if (v) throw new Error('kafkajs has no static membership') } else throw new Error('unknown flag ' + k)
  }
  return a
}

function out (line) { process.stdout.write(line + '\n') }

async function main () {
  const a = args()
  if (a.assignor !== 'roundrobin') throw new Error('kafkajs ships only the roundrobin assigner')
  const kafka = new Kafka({
    clientId: a.name,
    brokers: a.bootstrap.split(','),
    logLevel: logLevel.WARN,
    logCreator: () => ({ namespace, level, label, log }) => {
      process.stderr.write(`${label} ${namespace} ${log.message} ${JSON.stringify(log)}\n`)
    },
    retry: { initialRetryTime: 100, retries: 20 }
  })
  const consumer = kafka.consumer({
    groupId: a.group,
    sessionTimeout: a.sessionMs,
    heartbeatInterval: 1000,
    rebalanceTimeout: 20000,
    maxWaitTimeInMs: 200,
    partitionAssigners: [PartitionAssigners.roundRobin]
  })
  consumer.on(consumer.events.GROUP_JOIN, e => {
    const ps = (e.payload.memberAssignment[a.topic] || []).slice().sort((x, y) => x - y)
    out('ASSIGN ' + (ps.length ? ps.join(',') : '-'))
  })
  consumer.on(consumer.events.REBALANCING, () => out('ASSIGN -'))
  consumer.on(consumer.events.CRASH, e => process.stderr.write(`crash: ${e.payload.error}\n`))

  let stopping = false
  const stop = async () => {
    if (stopping) return
    stopping = true
    try { await consumer.disconnect() } catch (e) { process.stderr.write(`disconnect: ${e}\n`) }
    process.exit(0)
  }
  process.stdin.on('end', stop)
  process.stdin.resume()

  await consumer.connect()
  await consumer.subscribe({ topics: [a.topic], fromBeginning: true })
  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    eachBatch: async ({ batch, resolveOffset, isRunning, isStale }) => {
      let last = null
      for (const m of batch.messages) {
        if (!isRunning() || isStale()) break
        out(`REC ${batch.partition} ${m.offset} ${m.value.toString()}`)
        resolveOffset(m.offset)
        last = m.offset
      }
      if (last === null) return
      const next = (BigInt(last) + 1n).toString()
      try {
        await consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: next }])
        out(`COMMIT ${batch.partition} ${next}`)
      } catch (e) {
        process.stderr.write(`commit ${batch.partition}@${next} failed: ${e}\n`)
      }
    }
  })
}

main().catch(err => { process.stderr.write(`${err.stack || err}\n`); process.exit(1) })
