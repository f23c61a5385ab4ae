// Drives kafkajs transactions against a Klassik cluster; the story and the
// line protocol are described in broker/e2e/txn_driver_test.go.
//
//   node kafkajs_txn.js produce|consume --bootstrap <b> --topic <t> --input <i>
//        --group <g> --txn-id <id> --prefix <client> --partitions <n>
//        --small <n> --input-count <n> [--isolation read_committed|read_uncommitted]
//
// produce: producer.transaction() for A (committed), B (sendOffsets for
// --group on --input at the input's end, aborted), C (one record per input
// record, sendOffsets, committed), F (sent, then a second producer with the
// same transactionalId begins a transaction, which initialises it, and the
// first one's commit must fail fenced) and E (the second producer's,
// committed).
// consume: a consumer in a fresh group (kafkajs has no group-less
// consumer) with readUncommitted set from --isolation reads the output from
// the beginning and prints "REC <p> <offset> <key> <value>" until every
// partition's "END" sentinel (30 s at most).
'use strict'
const { Kafka, logLevel } = require('kafkajs')

function parseArgs (argv) {
  const a = { mode: argv[0], isolation: 'read_committed' }
  for (let i = 1; i < argv.length; i += 2) {
    a[argv[i].replace(/^--/, '').replace(/-([a-z])/g, (_, c) => c.toUpperCase())] = argv[i + 1]
  }
  for (const k of ['partitions', 'small', 'inputCount']) a[k] = parseInt(a[k], 10)
  return a
}

const out = line => process.stdout.write(line + '\n')

function messages (a, label, n) {
  const ms = []
  for (let i = 0; i < n; i++) {
    ms.push({ key: `${label}-${i}`, value: `${a.prefix}-${label}-${i}`, partition: i % a.partitions })
  }
  return ms
}

async function committedLine (admin, a) {
  let res
  try {
    res = await admin.fetchOffsets({ groupId: a.group, topics: [a.input] })
  } catch (e) {
    // A group with no state has nothing committed.
    if (e.type !== 'GROUP_ID_NOT_FOUND') throw e
    return Array.from({ length: a.partitions }, (_, p) => `${p}:-1`).join(',')
  }
  const parts = res.find(t => t.topic === a.input).partitions.slice().sort((x, y) => x.partition - y.partition)
  return parts.map(p => `${p.partition}:${parseInt(p.offset, 10) >= 0 ? p.offset : -1}`).join(',')
}

async function produce (kafka, a) {
  const newProducer = () => kafka.producer({
    transactionalId: a.txnId, maxInFlightRequests: 1, idempotent: true,
    transactionTimeout: 30000, allowAutoTopicCreation: false
  })
  const admin = kafka.admin()
  await admin.connect()
  const ends = await admin.fetchTopicOffsets(a.input)
  const offsets = {
    consumerGroupId: a.group,
    topics: [{ topic: a.input, partitions: ends.map(p => ({ partition: p.partition, offset: p.high })) }]
  }
  const p1 = newProducer()
  await p1.connect()

  const txn = async (p, label, n, sendOffsets, commit) => {
    const t = await p.transaction()
    await t.send({ topic: a.topic, acks: -1, messages: messages(a, label, n) })
    if (sendOffsets) await t.sendOffsets(offsets)
    if (commit) {
      await t.commit()
      out(`STEP commit ${label}`)
    } else {
      await t.abort()
      out(`STEP abort ${label}`)
    }
  }
  await txn(p1, 'A', a.small, false, true)
  await txn(p1, 'B', a.small, true, false)
  out(`OFFSETS after-abort ${await committedLine(admin, a)}`)
  await txn(p1, 'C', a.inputCount, true, true)
  // kafkajs's OffsetFetch (up to v4) has no require_stable: the commit's
  // offsets become visible once the coordinator's markers reach
  // __consumer_offsets, after EndTxn is answered. Wait for them (15 s at
  // most); after B's abort a single read is all kafkajs can check.
  const want = ends.map(p => `${p.partition}:${p.high}`).sort().join(',')
  let line = await committedLine(admin, a)
  for (const until = Date.now() + 15000; line !== want && Date.now() < until;) {
    await new Promise(resolve => setTimeout(resolve, 100))
    line = await committedLine(admin, a)
  }
  out(`OFFSETS after-commit ${line}`)

  const tf = await p1.transaction()
  await tf.send({ topic: a.topic, acks: -1, messages: messages(a, 'F', a.small) })
  out('STEP written F')
  const p2 = newProducer()
  await p2.connect()
  const te = await p2.transaction() // the first transaction() initialises the id
  out('STEP init second')
  try {
    await tf.commit()
    out('STEP commit F (not fenced)')
  } catch (e) {
    const cause = e.cause ? ` (cause: ${e.cause.name} ${e.cause.type || ''}: ${e.cause.message})` : ''
    out(`FENCED ${e.name} ${e.type || ''}: ${e.message}${cause}`.replace(/\n/g, ' '))
  }
  await te.send({ topic: a.topic, acks: -1, messages: messages(a, 'E', a.small) })
  await te.commit()
  out('STEP commit E')
  await p2.disconnect()
  await p1.disconnect().catch(() => {})
  await admin.disconnect()
}

async function consume (kafka, a) {
  const consumer = kafka.consumer({
    groupId: `klassik-txn-read-${a.isolation}-${process.pid}`,
    readUncommitted: a.isolation === 'read_uncommitted',
    sessionTimeout: 10000,
    heartbeatInterval: 1000,
    maxWaitTimeInMs: 500
  })
  await consumer.connect()
  await consumer.subscribe({ topic: a.topic, fromBeginning: true })
  const ended = new Set()
  let finish
  const done = new Promise(resolve => { finish = resolve })
  const timer = setTimeout(() => finish(), 30000)
  await consumer.run({
    autoCommit: false,
    eachMessage: async ({ partition, message }) => {
      if (ended.has(partition)) return
      const key = message.key.toString()
      out(`REC ${partition} ${message.offset} ${key} ${message.value.toString()}`)
      if (key === 'END') {
        ended.add(partition)
        if (ended.size >= a.partitions) finish()
      }
    }
  })
  await done
  clearTimeout(timer)
  await consumer.disconnect()
  if (ended.size < a.partitions) {
    console.error(`sentinels of ${ended.size} of ${a.partitions} partitions read within 30 s`)
    process.exit(2)
  }
}

async function main () {
  const a = parseArgs(process.argv.slice(2))
  const kafka = new Kafka({ clientId: 'klassik-txn-kafkajs', brokers: a.bootstrap.split(','), logLevel: logLevel.ERROR })
  if (a.mode === 'produce') return produce(kafka, a)
  if (a.mode === 'consume') return consume(kafka, a)
  throw new Error('usage: produce|consume --bootstrap ... (see the header)')
}

main().catch(err => { console.error(err); process.exit(1) })
