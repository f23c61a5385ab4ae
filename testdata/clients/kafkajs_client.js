// Drives kafkajs against a Klassik cluster.
//
//   node kafkajs_client.js produce <bootstrap> <topic> <count> [prefix]
//   node kafkajs_client.js consume <bootstrap> <topic> <count> [group]
//
// produce sends <count> records (key "k<i>", value "<prefix>-<i>") with
// acks=-1 in batches and prints "produced <n>" once all were acknowledged.
// consume joins consumer group <group> (kafkajs has no group-less consumer),
// reads the topic from the beginning and prints "<partition> <offset>
// <value>" per record until <count> records were read (60 s at most).
'use strict'
const { Kafka, logLevel } = require('kafkajs')

async function main () {
  const [mode, bootstrap, topic, countStr, extra] = process.argv.slice(2)
  const count = parseInt(countStr, 10)
  const kafka = new Kafka({ clientId: 'klassik-test', brokers: [bootstrap], logLevel: logLevel.ERROR })
  if (mode === 'consume') return consume(kafka, topic, count, extra || 'kafkajs-consume')
  if (mode !== 'produce') throw new Error('usage: produce|consume <bootstrap> <topic> <count> [prefix|group]')
  const prefix = extra || 'kafkajs'
  const producer = kafka.producer({ allowAutoTopicCreation: false, idempotent: true, maxInFlightRequests: 1 })
  await producer.connect()
  const batch = 500
  for (let i = 0; i < count; i += batch) {
    const messages = []
    for (let j = i; j < Math.min(count, i + batch); j++) {
      messages.push({ key: `k${j}`, value: `${prefix}-${j}` })
    }
    await producer.send({ topic, acks: -1, messages })
  }
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
  const timer = setTimeout(() => finish(), 60000)
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
