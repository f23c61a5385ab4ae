// Drives kafkajs over TLS and SASL (broker/e2e's security matrix).
//
//   node security_kafkajs.js <produce|consume|connect> <bootstrap> <security JSON> [topic count prefix|group]
//
// The security JSON is the matrix's neutral form (see security_client.py):
// protocol, mechanism, username, password, ca, cert, key (file paths).
// produce sends <count> records (key "k<i>", value "<prefix>-<i>", acks=-1)
// and prints "produced <n>"; consume joins group <group>, reads from the
// beginning and prints "<partition> <offset> <value>" per record; connect
// fetches the metadata once and prints "connected" or "error: <name>:
// <message>" (exit 3). Retries are off and timeouts short, so a refused
// login or certificate ends the run instead of retrying for minutes.
'use strict'
const fs = require('fs')
const { Kafka, logLevel } = require('kafkajs')

function clientConfig (bootstrap, sec) {
  const ssl = { ca: [fs.readFileSync(sec.ca)] }
  if (sec.cert) {
    ssl.cert = fs.readFileSync(sec.cert)
    ssl.key = fs.readFileSync(sec.key)
  }
  const cfg = {
    clientId: 'klassik-security',
    brokers: [bootstrap],
    logLevel: logLevel.NOTHING,
    ssl,
    connectionTimeout: 5000,
    authenticationTimeout: 5000,
    requestTimeout: 10000
  }
  if (sec.protocol.startsWith('SASL')) {
    cfg.sasl = { mechanism: sec.mechanism.toLowerCase(), username: sec.username, password: sec.password }
  }
  return cfg
}

async function main () {
  const [mode, bootstrap, secJSON, topic, countStr, extra] = process.argv.slice(2)
  const sec = JSON.parse(secJSON)
  const cfg = clientConfig(bootstrap, sec)
  if (mode === 'connect') {
    cfg.retry = { retries: 0 }
    const admin = new Kafka(cfg).admin()
    try {
      await admin.connect()
      await admin.fetchTopicMetadata({ topics: [] })
    } catch (e) {
      console.log(`error: ${e.name}: ${e.message}`)
      await admin.disconnect().catch(() => {})
      process.exit(3)
    }
    await admin.disconnect()
    console.log('connected')
    return
  }
  const kafka = new Kafka(cfg)
  const count = parseInt(countStr, 10)
  if (mode === 'consume') return consume(kafka, topic, count, extra)
  const producer = kafka.producer({ allowAutoTopicCreation: false, idempotent: true, maxInFlightRequests: 1 })
  await producer.connect()
  const messages = []
  for (let j = 0; j < count; j++) messages.push({ key: `k${j}`, value: `${extra}-${j}` })
  await producer.send({ topic, acks: -1, messages })
  await producer.disconnect()
  console.log(`produced ${count}`)
}

async function consume (kafka, topic, count, groupId) {
  const consumer = kafka.consumer({ groupId, sessionTimeout: 10000, heartbeatInterval: 1000 })
  await consumer.connect()
  await consumer.subscribe({ topic, fromBeginning: true })
  let seen = 0
  let finish
  const done = new Promise(resolve => { finish = resolve })
  const timer = setTimeout(() => finish(), 30000)
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      if (seen >= count) return
      process.stdout.write(`${partition} ${message.offset} ${message.value.toString()}\n`)
      seen++
      if (seen >= count) finish()
    }
  })
  await done
  clearTimeout(timer)
  await consumer.disconnect()
  if (seen < count) {
    console.error(`read ${seen} of ${count} records`)
    process.exit(2)
  }
}

main().catch(err => { console.error(err); process.exit(1) })
